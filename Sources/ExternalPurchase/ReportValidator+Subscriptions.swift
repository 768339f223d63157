import Domain

/// Apple's rules for subscription line items: the events Apple knows, their dates and paid days, and what a
/// renewal or plan change refers to.
extension ReportValidator {
    /// linkout's own check, not Apple's (Apple documents no error for it): a period date far from the item's
    /// `creationDate` is one in seconds or otherwise misread, and Apple would record a period in 1970. Five years
    /// either side leaves room for the longest billing period a provider offers (Stripe's three years, 1,096 days
    /// with a 29 February) however late its item is dated.
    static let periodOutOfRange = "SubscriptionPeriodOutOfRangeError"
    static let periodReach = Milliseconds.days(5 * 366)

    func subscriptionProblems(_ item: SubscriptionBuyLineItem) -> [ReportProblem] {
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        if !Self.subscriptionEvents.contains(item.subscriptionEvent) {
            problems.append(
                .init("UnknownEnumError", field: "subscriptionEvent", lineItem: id, "not a subscription event")
            )
        }
        if item.subscriptionStartDate >= item.subscriptionEndDate {
            problems.append(
                .init(
                    "StartDateAfterEndDateError",
                    field: "subscriptionStartDate",
                    lineItem: id,
                    "the period must start before it ends"
                )
            )
        }
        if let far = [item.subscriptionStartDate, item.subscriptionEndDate].first(where: {
            // Any Int64 may be posted: overflowing is as far as it gets.
            let (distance, overflow) = $0.subtractingReportingOverflow(item.creationDate)
            return overflow || distance.magnitude > Self.periodReach.magnitude
        }) {
            problems.append(
                .init(
                    Self.periodOutOfRange,
                    field: far == item.subscriptionStartDate ? "subscriptionStartDate" : "subscriptionEndDate",
                    lineItem: id,
                    "the period is in milliseconds, within five years of creationDate (a date in seconds reads as 1970)"
                )
            )
        }
        if item.subscriptionDaysOfPaidService < 0 {
            problems.append(
                .init(
                    "NegativeValueNotAllowedError",
                    field: "subscriptionDaysOfPaidService",
                    lineItem: id,
                    "never negative"
                )
            )
        }
        if item.subscriptionEvent == "SUBSCRIPTION_START" && item.subscriptionDaysOfPaidService != 0 {
            problems.append(
                .init(
                    "SubscriptionStartNonZeroDaysPaidServiceError",
                    field: "subscriptionDaysOfPaidService",
                    lineItem: id,
                    "a subscription starts with 0 days of paid service"
                )
            )
        }
        if item.referenceLineItemId == id {
            problems.append(
                .init("SelfReferenceError", field: "referenceLineItemId", lineItem: id, "references itself")
            )
        }
        return problems
    }

    /// A subscription item's `referenceLineItemId` names the subscription's start (Apple: "referenceLineItemId",
    /// "SubscriptionBuyLineItem"); Apple refuses a reference to anything else
    /// (`ReferenceInvalidSubscriptionEventError`: "the referenced line item has no subscription event or its
    /// subscription event is not subscription start"; `ReferenceLineItemNotABuyError` for a refund). A reference to an
    /// item this token does not hold is left to Apple: the start may sit on another token of the same customer. A
    /// `SUBSCRIPTION_PAYMENT` must carry money (`InvalidTaxInclusiveAmountForSubscriptionPaymentError`: "the tax
    /// inclusive amount must be positive").
    func subscriptionReferenceProblems(_ item: SubscriptionBuyLineItem, batch: [LineItem]) -> [ReportProblem] {
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        if item.subscriptionEvent == "SUBSCRIPTION_PAYMENT" && item.amountTaxInclusive <= 0 {
            problems.append(
                .init(
                    "InvalidTaxInclusiveAmountForSubscriptionPaymentError",
                    field: "amountTaxInclusive",
                    lineItem: id,
                    "a SUBSCRIPTION_PAYMENT reports a payment: amountTaxInclusive above 0"
                )
            )
        }
        guard let reference = item.referenceLineItemId, reference != id,
            let referenced = (earlierLineItems + batch).last(where: { $0.common.lineItemId == reference })
        else { return problems }
        switch referenced {
        case .refund:
            problems.append(
                .init(
                    "ReferenceLineItemNotABuyError",
                    field: "referenceLineItemId",
                    lineItem: id,
                    "a subscription item references its subscription's start, not a refund"
                )
            )
        case .oneTimeBuy:
            problems.append(
                .init(
                    "ReferenceInvalidSubscriptionEventError",
                    field: "referenceLineItemId",
                    lineItem: id,
                    "the referenced line item is a one-time buy, not a SUBSCRIPTION_START"
                )
            )
        case .subscriptionBuy(let start) where start.subscriptionEvent != "SUBSCRIPTION_START":
            problems.append(
                .init(
                    "ReferenceInvalidSubscriptionEventError",
                    field: "referenceLineItemId",
                    lineItem: id,
                    "the referenced line item is a \(start.subscriptionEvent), not the SUBSCRIPTION_START"
                )
            )
        case .subscriptionBuy(let start):
            // As a refund is never dated before its buy (`matchProblems`): an item of the subscription dated before
            // its start is what Apple's error names (UNCONFIRMED). A restatement keeps the date Apple took before.
            if item.creationDate < start.creationDate && item.restatement != true {
                problems.append(
                    .init(
                        "ReferencedCreationDateIncompatibleError",
                        field: "creationDate",
                        lineItem: id,
                        "a subscription item cannot be dated before the SUBSCRIPTION_START it references"
                    )
                )
            }
        }
        return problems
    }

    /// 365 days in milliseconds: Apple's "one year" for refunds and restatements (Apple:
    /// `RefundNotAllowedCreationDateError`, `RestatementNotAllowedCreationDateError`). Not confirmed whether Apple
    /// counts a leap year's 366th day; the shorter year is the safe reading.
    static let year = Milliseconds.days(365)
}
