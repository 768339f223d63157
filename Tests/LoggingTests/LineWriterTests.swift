import Dispatch
import Foundation
import Testing

@testable import Logging

@Suite("Line writer")
struct LineWriterTests {
    /// A reader that stopped reading: the pipe is full, and logging returns at once, the lines dropped and counted;
    /// once the reader has room again, the next line is preceded by one saying how many were lost. A blocked write
    /// stopped the server answering anyone.
    @Test func aFullPipeDropsLinesInsteadOfBlockingAndSaysHowMany() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (reading, writing) = (ends[0], ends[1])
        defer {
            close(reading)
            close(writing)
        }
        // Filled through a non-blocking write, then blocking again, as a log's pipe is.
        let flags = fcntl(writing, F_GETFL)
        _ = fcntl(writing, F_SETFL, flags | O_NONBLOCK)
        let chunk = [UInt8](repeating: 0x2E, count: 4096)
        while chunk.withUnsafeBytes({ write(writing, $0.baseAddress, $0.count) }) > 0 {}
        _ = fcntl(writing, F_SETFL, flags)

        let writer = LineWriter(descriptor: writing)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for index in 0..<50 { writer.write(#"{"message":"line \#(index)"}"#) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "logging blocked on a full pipe")

        var buffer = [UInt8](repeating: 0, count: 65536)
        var drained = 0
        _ = fcntl(reading, F_SETFL, fcntl(reading, F_GETFL) | O_NONBLOCK)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            drained += count
        }
        #expect(drained > 0)
        writer.write(#"{"message":"after"}"#)
        let count = buffer.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
        let text = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        #expect(text.contains(#""dropped_lines":"50""#), "\(text)")
        #expect(text.contains("log lines dropped") && text.hasSuffix(#"{"message":"after"}"# + "\n"), "\(text)")
    }
}
