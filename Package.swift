// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
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
        .target(name: "ExternalPurchase", dependencies: ["Outbound", "Crypto"], swiftSettings: swiftSettings),
        .target(name: "Storage", dependencies: ["CSQLite", "CLibPQ", "Lifecycle"], swiftSettings: swiftSettings),
        // Payment providers (demo, Stripe over Outbound), Stripe webhooks, and purchases as Apple line items.
        .target(
            name: "Payments",
            dependencies: ["Outbound", "Crypto", "ExternalPurchase", "Lifecycle"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LinkOut",
            dependencies: [
                "HTTPServer", "Logging", "Lifecycle", "ExternalPurchase", "Storage", "Crypto", "Outbound", "Payments",
            ],
            swiftSettings: swiftSettings
        ),
        // The command line: argument parsing and printing; the work happens in LinkOut.
        .executableTarget(
            name: "linkout",
            dependencies: ["LinkOut", "ExternalPurchase", "Storage", "Outbound", "Logging", "Lifecycle"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer target (scripts/fuzz.sh); a plain build makes a no-op executable.
        .executableTarget(
            name: "LinkOutFuzz",
            dependencies: ["HTTPServer", "ExternalPurchase"],
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by the test tiers (a raw socket client, a small tmpfs, polling with a deadline).
        .target(
            name: "TestSupport",
            dependencies: ["HTTPServer", "Logging", "Payments", "Crypto", "ExternalPurchase", "CLibPQ"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "Logging", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ExternalPurchaseTests",
            dependencies: ["ExternalPurchase", "Crypto", "Outbound", "HTTPServer", "Logging", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OutboundTests",
            dependencies: ["Outbound", "HTTPServer", "Logging"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PaymentsTests",
            dependencies: [
                "Payments", "Outbound", "Crypto", "ExternalPurchase", "Lifecycle", "HTTPServer", "Logging",
                "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinkOutTests",
            dependencies: [
                "LinkOut", "HTTPServer", "Logging", "Lifecycle", "TestSupport", "Storage", "ExternalPurchase", "Crypto",
                "Payments",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
