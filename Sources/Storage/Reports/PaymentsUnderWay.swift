/// Which payments on a token count as still able to complete when the planner judges whether it is a duplicate
/// (`ReportStore.isDuplicateToken`): a checkout session opened since `openSince` and still open, or a payment
/// pending (a bank debit) that moved since `pendingSince`, on a token not yet expired at `now`.
public struct PaymentsUnderWay: Sendable, Equatable {
    public var now: Int64
    public var openSince: Int64
    public var pendingSince: Int64

    public init(now: Int64, openSince: Int64, pendingSince: Int64) {
        self.now = now
        self.openSince = openSince
        self.pendingSince = pendingSince
    }

    /// No payment counts (a token past every end): the judgement by line items and first sighting alone.
    public static let none = PaymentsUnderWay(now: .max, openSince: .max, pendingSince: .max)

    /// The values of `ReportStore.paymentUnderWay`'s placeholders, in their order.
    var parameters: [SQLValue] { [.integer(now), .integer(openSince), .integer(pendingSince)] }
}
