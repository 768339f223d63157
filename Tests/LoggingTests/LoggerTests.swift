import Foundation
import Synchronization
import Testing

@testable import Logging

@Suite("Logger")
struct LoggerTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var sink: Logger.Sink { Logger.Sink { [self] line in lines.withLock { $0.append(line) } } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func object(_ line: String) throws -> [String: String] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
    }

    @Test func eachEventIsOneJSONObjectOnOneLineWithSortedKeys() throws {
        let lines = Lines()
        var logger = Logger(label: "test", level: .info, metadata: ["instance": "a"], sink: lines.sink)
        logger[metadataKey: "region"] = "eu"
        logger.info("report sent", ["http.status": "200"])
        let line = try #require(lines.all.first)
        #expect(!line.contains("\n"))
        let object = try Self.object(line)
        #expect(object["message"] == "report sent")
        #expect(object["level"] == "info")
        #expect(object["label"] == "test")
        #expect(object["instance"] == "a")
        #expect(object["region"] == "eu")
        #expect(object["http.status"] == "200")
        #expect(object["time"]?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        let keys = line.matches(of: /"([^"]+)":/).map { String($0.1) }
        #expect(keys == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func linesBelowTheLevelAreDropped() {
        let lines = Lines()
        let logger = Logger(label: "test", level: .warning, sink: lines.sink)
        logger.trace("t")
        logger.debug("d")
        logger.info("i")
        logger.notice("n")
        logger.warning("w")
        logger.error("e")
        logger.critical("c")
        #expect(lines.all.count == 3)
        #expect(lines.all.allSatisfy { !$0.contains(#""message":"i""#) })
    }

    /// The event's own fields win over metadata, and nothing replaces the level, message, label or time.
    @Test func reservedKeysCannotBeReplaced() throws {
        let lines = Lines()
        let logger = Logger(label: "test", metadata: ["key": "logger", "level": "fake"], sink: lines.sink)
        logger.info("real", ["key": "event", "message": "forged", "label": "other", "time": "never"])
        let object = try Self.object(try #require(lines.all.first))
        #expect(object["key"] == "event")
        #expect(object["level"] == "info")
        #expect(object["message"] == "real")
        #expect(object["label"] == "test")
        #expect(object["time"] != "never")
    }

    /// Values from outside (a client's header, Apple's error body) cannot break the line or forge a field.
    @Test func controlCharactersAndQuotesAreEscaped() throws {
        let lines = Lines()
        let logger = Logger(label: "test", sink: lines.sink)
        let nasty = "a\"b\\c/d\u{8}\u{c}\n\r\t\u{1}\u{1f}é"
        logger.info("escaped", ["value": nasty])
        let line = try #require(lines.all.first)
        #expect(!line.contains("\n") && !line.contains("\r"))
        #expect(line.contains(#"a\"b\\c\/d\b\f\n\r\t\u0001\u001fé"#))
        #expect(try Self.object(line)["value"] == nasty)
    }

    @Test func levelsParseByName() {
        #expect(Logger.Level(name: "info") == .info)
        #expect(Logger.Level(name: "WARNING") == .warning)
        #expect(Logger.Level(name: "verbose") == nil)
        #expect(
            Logger.Level.allCases.map(\.name) == [
                "trace", "debug", "info", "notice", "warning", "error", "critical",
            ]
        )
        #expect(Logger.Level.debug < .info)
    }
}
