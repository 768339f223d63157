import Testing

@testable import Lifecycle

@Suite("/proc files")
struct ProcFileTests {
    /// `/proc` files come a page at a time and report no size: reading one as an ordinary file got only its first
    /// 4 KiB, and `linkout check` missed a listening socket listed after that in `/proc/net/tcp`.
    @Test func aProcFileIsReadPastItsFirstPage() throws {
        let maps = try #require(ProcFile.read("/proc/self/maps"))
        #expect(maps.utf8.count > 8192, "the test process maps more than two pages of lines")
        // The stack is mapped above every library, so it is listed near the end.
        #expect(maps.contains("[stack]"))
        #expect(ProcFile.read("/proc/self/no-such-file") == nil)
    }
}
