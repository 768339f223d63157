import Domain
import Testing

/// Totals of amounts held at Int64's ends instead of trapping (the money views and the close sum them).
@Suite("Saturating sums")
struct SaturatingArithmeticTests {
    @Test func sumsHoldAtTheEndsInsteadOfTrapping() {
        #expect(Int64.saturating(.max, plus: 1) == .max)
        #expect(Int64.saturating(.min, plus: -1) == .min)
        #expect(Int64.saturating(.min, minus: 1) == .min)
        #expect(Int64.saturating(.max, minus: -1) == .max)
        #expect(Int64.saturating(2, plus: 3) == 5)
        var total: Int64 = .max - 1
        total.add(saturating: 10)
        #expect(total == .max)
    }
}
