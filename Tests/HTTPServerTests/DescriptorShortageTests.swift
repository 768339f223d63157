import Testing

@testable import HTTPServer

@Suite("Descriptor shortage")
struct DescriptorShortageTests {
    /// The warning is said once a minute across both loops. A loop whose moment was taken before the other's
    /// warning (so earlier than it) is not a minute after it: the wrapped difference said a second warning at once.
    @Test func theWarningIsOnceAMinuteWhateverOrderTheLoopsCome() {
        let shortage = DescriptorShortage()
        let first: UInt64 = 5_000_000_000
        #expect(shortage.warningDue(now: first) != nil)
        #expect(shortage.warningDue(now: first - 1) == nil)
        #expect(shortage.warningDue(now: first + DescriptorShortage.warningInterval - 1) == nil)
        #expect(shortage.warningDue(now: first + DescriptorShortage.warningInterval) != nil)
    }
}
