/// How many tokens of a month (or line items dated in it) there are, and of those not accepted by Apple yet how
/// many stand in each state.
public struct CloseCounts: Sendable, Equatable {
    public var total: Int64
    public var outstanding: [CloseItem.State: Int64]

    public init(total: Int64 = 0, outstanding: [CloseItem.State: Int64] = [:]) {
        self.total = total
        self.outstanding = outstanding
    }

    /// Not accepted yet, whatever the state.
    public var outstandingTotal: Int64 { outstanding.values.reduce(0, +) }
    public var accepted: Int64 { total - outstandingTotal }
}
