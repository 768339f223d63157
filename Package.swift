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
        .target(name: "HTTPServer", dependencies: ["CSystem", "Logging"], swiftSettings: swiftSettings),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "Outbound", dependencies: ["CCurl"], swiftSettings: swiftSettings),
        .target(name: "ExternalPurchase", dependencies: ["Outbound", "CCrypto"], swiftSettings: swiftSettings),
        .target(name: "Storage", dependencies: ["CSQLite"], swiftSettings: swiftSettings),
        .target(
            name: "LinkOut",
            dependencies: ["HTTPServer", "Logging", "ExternalPurchase", "Storage", "CCrypto", "Outbound"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "linkout", dependencies: ["LinkOut"], swiftSettings: swiftSettings),
        // libFuzzer target (scripts/fuzz.sh); a plain build makes a no-op executable.
        .executableTarget(
            name: "LinkOutFuzz",
            dependencies: ["HTTPServer", "ExternalPurchase"],
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by the live tiers (a raw socket client).
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: swiftSettings),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "Logging", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ExternalPurchaseTests",
            dependencies: ["ExternalPurchase"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "StorageTests", dependencies: ["Storage"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OutboundTests",
            dependencies: ["Outbound", "HTTPServer", "Logging"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinkOutTests",
            dependencies: ["LinkOut", "HTTPServer", "Logging", "TestSupport", "Storage", "ExternalPurchase"],
            swiftSettings: swiftSettings
        ),
    ]
)
