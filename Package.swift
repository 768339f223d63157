// swift-tools-version:6.0
import Foundation
import PackageDescription

// InternalImportsByDefault: an import is internal unless it says otherwise, so a module's public (or package) face
// names exactly the modules it exposes (`public import`, `package import`); the others stay its own business.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "linkout",
    products: [
        .executable(name: "linkout", targets: ["linkout"])
    ],
    targets: [
        // Linux system calls the Glibc module hides (accept4, epoll, eventfd need _GNU_SOURCE or packed structs).
        .target(name: "CSystem", cSettings: [.define("_GNU_SOURCE")]),
        .target(name: "Logging", swiftSettings: swiftSettings),
        // The domain's small value types every layer shares, storage included: no dependencies of its own.
        .target(name: "Domain", swiftSettings: swiftSettings),
        // Threads of our own and an injectable clock, shared by every layer that runs in the background.
        .target(name: "Lifecycle", swiftSettings: swiftSettings),
        .target(name: "HTTPServer", dependencies: ["CSystem", "Logging", "Lifecycle"], swiftSettings: swiftSettings),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // HMAC-SHA256 and ES256 over OpenSSL: the only user of CCrypto.
        .target(name: "Crypto", dependencies: ["CCrypto"], swiftSettings: swiftSettings),
        .target(name: "Outbound", dependencies: ["CCurl"], swiftSettings: swiftSettings),
        .target(
            name: "ExternalPurchase",
            dependencies: ["Domain", "Outbound", "Crypto"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Storage",
            dependencies: ["Domain", "CSQLite", "CLibPQ", "Lifecycle"],
            swiftSettings: swiftSettings
        ),
        // Payment providers (demo, Stripe over Outbound), Stripe webhooks, and purchases as Apple line items.
        .target(
            name: "Payments",
            dependencies: ["Domain", "Outbound", "Crypto", "Lifecycle"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LinkOut",
            dependencies: [
                "Domain", "HTTPServer", "Logging", "Lifecycle", "ExternalPurchase", "Storage", "Crypto", "Outbound",
                "Payments",
            ],
            swiftSettings: swiftSettings
        ),
        // The command line: argument parsing and printing; the work happens in LinkOut.
        .executableTarget(
            name: "linkout",
            dependencies: [
                "CSystem", "Domain", "LinkOut", "ExternalPurchase", "Storage", "Outbound", "Logging", "Lifecycle",
            ],
            swiftSettings: swiftSettings
        ),
        // Fills a ledger in bulk for the benchmarks (`linkout-bench seed`, the growth and money benchmarks in the
        // tests), writing the tables directly; not part of the server.
        .target(name: "LedgerSeeding", dependencies: ["Domain", "Storage"], swiftSettings: swiftSettings),
        // The growth benchmark's fill and planner timing (`bench/growth.sh`); not part of the server.
        .executableTarget(
            name: "linkout-bench",
            dependencies: ["Domain", "LinkOut", "Storage", "LedgerSeeding", "Logging", "Lifecycle"],
            path: "Sources/LinkOutBench",
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by the test tiers (a raw socket client, a small tmpfs, polling with a deadline).
        .target(
            name: "TestSupport",
            dependencies: ["Domain", "HTTPServer", "Logging", "Payments", "Crypto", "ExternalPurchase", "CLibPQ"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "Logging", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LifecycleTests", dependencies: ["Lifecycle", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"], swiftSettings: swiftSettings),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ExternalPurchaseTests",
            dependencies: ["Domain", "ExternalPurchase", "Crypto", "Outbound", "HTTPServer", "Logging", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StorageTests",
            dependencies: ["Domain", "Storage", "LedgerSeeding", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OutboundTests",
            dependencies: ["Outbound", "HTTPServer", "Logging", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PaymentsTests",
            dependencies: [
                "Domain", "Payments", "Outbound", "Crypto", "ExternalPurchase", "Lifecycle", "HTTPServer", "Logging",
                "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinkOutTests",
            dependencies: [
                "Domain", "LinkOut", "HTTPServer", "Logging", "Lifecycle", "TestSupport", "Storage", "LedgerSeeding",
                "ExternalPurchase", "Crypto", "Payments", "Outbound",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// libFuzzer targets, one per parser of outside bytes: `fuzz-<name>` from `Sources/Fuzz/<Name>`. They exist
// only when LINKOUT_FUZZ=1 (scripts/fuzz.sh sets it and builds with --sanitize=fuzzer, under which SwiftPM lets
// libFuzzer supply main). As no-op executables in every build they would add a dozen links of the whole server to
// each `swift build` and `swift test` for code that only means something under the fuzzer.
let fuzzTargets: [(name: String, target: String, dependencies: [Target.Dependency])] = [
    ("http-request", "LinkOutFuzzHTTPRequest", ["HTTPServer"]),
    ("chunked-body", "LinkOutFuzzChunkedBody", ["HTTPServer"]),
    ("form", "LinkOutFuzzForm", ["HTTPServer"]),
    ("token", "LinkOutFuzzToken", ["Domain", "ExternalPurchase"]),
    ("notification-jws", "LinkOutFuzzNotificationJWS", ["ExternalPurchase", "LinkOutFuzzSupport"]),
    ("x509", "LinkOutFuzzX509", ["Crypto", "LinkOutFuzzSupport"]),
    ("apple-report-error", "LinkOutFuzzAppleReportError", ["Domain", "LinkOut", "ExternalPurchase", "Storage"]),
    ("notification-history", "LinkOutFuzzNotificationHistory", ["ExternalPurchase", "LinkOutFuzzSupport"]),
    ("stripe-event", "LinkOutFuzzStripeEvent", ["Payments"]),
    ("stripe-signature", "LinkOutFuzzStripeSignature", ["Crypto", "Payments"]),
    ("paddle-notification", "LinkOutFuzzPaddleNotification", ["Payments"]),
    ("paddle-adjustment", "LinkOutFuzzPaddleAdjustment", ["Payments"]),
    ("paddle-signature", "LinkOutFuzzPaddleSignature", ["Crypto", "Payments"]),
    ("journal", "LinkOutFuzzJournal", ["Storage"]),
    ("config", "LinkOutFuzzConfig", ["LinkOut"]),
]
if ProcessInfo.processInfo.environment["LINKOUT_FUZZ"] == "1" {
    // A fuzz build is one `swift build` of every target left: the libraries and the fuzz targets. The server's
    // and benchmark executables have no fuzzer entry point, the tests are not fuzzed, and the benchmarks' fill
    // serves only them.
    package.products = []
    package.targets.removeAll {
        $0.type == .test || ["TestSupport", "LedgerSeeding", "linkout", "linkout-bench"].contains($0.name)
    }
    // The fixed test chain the signed seeds were made with, shared by the targets that check signatures.
    package.targets.append(
        .target(
            name: "LinkOutFuzzSupport",
            dependencies: ["ExternalPurchase", "Crypto"],
            path: "Sources/Fuzz/Support",
            swiftSettings: swiftSettings
        )
    )
    for fuzz in fuzzTargets {
        package.products.append(.executable(name: "fuzz-\(fuzz.name)", targets: [fuzz.target]))
        package.targets.append(
            .executableTarget(
                name: fuzz.target,
                dependencies: fuzz.dependencies,
                // One folder for them all beside the modules: `Sources/Fuzz/Token` for `LinkOutFuzzToken`.
                path: "Sources/Fuzz/" + fuzz.target.dropFirst("LinkOutFuzz".count),
                swiftSettings: swiftSettings
            )
        )
    }
}
