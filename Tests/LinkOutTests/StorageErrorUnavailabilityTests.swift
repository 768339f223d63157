import HTTPServer
import Testing

@testable import LinkOut
@testable import Storage

/// A write the disk or the database server cannot take right now is answered 503 with `Retry-After` by the server
/// (`TemporaryUnavailability`, `HTTPServerLiveTests.unknownPathsAndMethods`); any other storage failure stays the
/// server's own fault.
@Suite("Storage errors as answers")
struct StorageErrorUnavailabilityTests {
    @Test func aFullDiskOrAnAwayDatabaseIsTemporaryAndNothingElseIs() {
        func seconds(_ code: StorageError.Code) -> Int? {
            (StorageError(code, "test") as any TemporaryUnavailability).retryAfterSeconds
        }
        #expect(seconds(.diskFull) == 30)
        #expect(seconds(.unavailable) == 5)
        for code: StorageError.Code in [.constraint, .notFound, .closed, .journal, .readOnly, .conflict] {
            #expect(seconds(code) == nil, "\(code)")
        }
    }
}
