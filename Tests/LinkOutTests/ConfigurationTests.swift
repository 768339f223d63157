import Foundation
import Testing

@testable import LinkOut

@Suite("Configuration")
struct ConfigurationTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func parse(_ json: String) throws(ConfigurationError) -> Configuration {
        try Configuration.parse(Data(json.utf8))
    }

    func failure(_ json: String) -> ConfigurationError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func theShippedConfigLoads() throws {
        let data = try Data(contentsOf: Self.repositoryRoot.appendingPathComponent("config.json"))
        let configuration = try Configuration.parse(data)
        #expect(configuration.server.port == 8080)
        #expect(configuration.dataDir == "data")
    }

    @Test func badFieldsAreNamed() {
        #expect(failure(#"{"server": {"port": "80"}}"#)?.field == "server.port")
        #expect(failure(#"{"server": {"port": 70000}}"#)?.field == "server.port")
        #expect(failure(#"{"server": {"port": 80.5}}"#)?.field == "server.port")
        #expect(failure(#"{"server": {"prot": 80}}"#)?.field == "server.prot")
        #expect(failure(#"{"server": {"publicURL": "nope"}}"#)?.field == "server.publicURL")
        #expect(failure(#"{"server": {"trustedProxies": [1]}}"#)?.field == "server.trustedProxies[0]")
        #expect(failure(#"{"storage": []}"#)?.field == "storage")
        #expect(failure(#"{"logging": {"level": "loud"}}"#)?.field == "logging.level")
        #expect(failure(#"{"surprise": 1}"#)?.field == "surprise")
        #expect(failure("{not json")?.field == "config.json")
        #expect(failure("[]")?.field == "config.json")
    }

    @Test func environmentBeatsFileAndFlagsBeatEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("c.json")
        try Data(#"{"server": {"host": "10.0.0.1", "port": 1000}, "storage": {"dataDir": "file"}}"#.utf8).write(
            to: file
        )
        let environment = ["LINKOUT_CONFIG": file.path, "LINKOUT_PORT": "2000", "LINKOUT_DATA_DIR": "env"]
        let fromEnvironment = try Configuration.load(environment: environment)
        #expect(fromEnvironment.server.host == "10.0.0.1")
        #expect(fromEnvironment.server.port == 2000)
        #expect(fromEnvironment.dataDir == "env")
        let fromFlags = try Configuration.load(
            overrides: .init(port: "0", dataDir: "flag"),
            environment: environment
        )
        #expect(fromFlags.server.port == 0)
        #expect(fromFlags.dataDir == "flag")
    }

    @Test func aMissingFileThatWasAskedForIsAnError() {
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(overrides: .init(configPath: "/nonexistent/linkout.json"), environment: [:])
        }
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(environment: ["LINKOUT_PORT": "eighty"])
        }
    }
}
