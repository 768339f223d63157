import Domain

/// Apple's rules for corrections (restatements and retractions), refunds and the nets a line item states: a refund refers to a buy of the token and
/// repeats its currencies, country and rate within a year, and every version carries its buy's net as it stands
/// (`PurchaseNet`).
extension ReportValidator {
    /// Apple's limits on restating or retracting a line item ("Error messages and codes"): only for one year after its
    /// `creationDate` (`RestatementNotAllowedCreationDateError`), and always with the `creationDate` it was first
    /// reported with (`RestatementCreationDateMismatchError`). A retraction is a restatement too.
    func correctionProblems(_ item: LineItemAmounts, batch: [LineItem] = []) -> [ReportProblem] {
        guard item.restatement == true else { return [] }
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        // A buy withdrawn while a refund that stands refers to it: Apple's
        // `ErroneousLineItemReferencedByValidLineItemError` (the refund is withdrawn first).
        if item.erroneouslySubmitted == true {
            let standingReferences = PurchaseNet.standing(earlierLineItems + batch).contains {
                guard case .refund(let refund) = $0 else { return false }
                return refund.referenceLineItemId == id
            }
            if standingReferences {
                problems.append(
                    .init(
                        "ErroneousLineItemReferencedByValidLineItemError",
                        field: "erroneouslySubmitted",
                        lineItem: id,
                        "a refund that stands refers to this line item: withdraw the refund first"
                    )
                )
            }
        }
        if now > Int64.saturating(item.creationDate, plus: Self.year) {
            problems.append(
                .init(
                    "RestatementNotAllowedCreationDateError",
                    field: "creationDate",
                    lineItem: id,
                    "a line item can be restated or retracted for one year after its creationDate"
                )
            )
        }
        if let original = earlierLineItems.last(where: { $0.common.lineItemId == id }),
            original.common.creationDate != item.creationDate
        {
            problems.append(
                .init(
                    "RestatementCreationDateMismatchError",
                    field: "creationDate",
                    lineItem: id,
                    "a restatement keeps the creationDate the line item was reported with"
                )
            )
        }
        return problems
    }

    func refundProblems(_ refund: RefundLineItem, batch: [LineItem], before: [LineItem]) -> [ReportProblem] {
        let id = refund.lineItemId
        var problems: [ReportProblem] = []
        if refund.quantity != nil {
            problems.append(.init("FieldNotAllowedError", field: "quantity", lineItem: id, "refunds carry no quantity"))
        }
        if refund.referenceLineItemId == id {
            return problems + [
                .init("SelfReferenceError", field: "referenceLineItemId", lineItem: id, "references itself")
            ]
        }
        let candidates = earlierLineItems + batch
        guard let referenced = candidates.last(where: { $0.common.lineItemId == refund.referenceLineItemId }) else {
            return problems + [
                .init(
                    "NotFoundError",
                    field: "referenceLineItemId",
                    lineItem: id,
                    "the refunded line item is not known for this token"
                )
            ]
        }
        guard referenced.isBuy else {
            return problems + [
                .init(
                    "RefundReferencedByRefundError",
                    field: "referenceLineItemId",
                    lineItem: id,
                    "a refund references a buy"
                )
            ]
        }
        // Apple: a line item that stands may not refer to one withdrawn (`erroneouslySubmitted`); its latest version
        // is the one Apple reads.
        if refund.erroneouslySubmitted != true, referenced.common.erroneouslySubmitted == true {
            problems.append(
                .init(
                    "ValidLineItemReferencesErroneousLineItemError",
                    field: "referenceLineItemId",
                    lineItem: id,
                    "the refunded buy was withdrawn (erroneouslySubmitted)"
                )
            )
        }
        return problems + matchProblems(refund, buy: referenced.common) + netProblems(refund, before: before)
    }

    /// What a refund must repeat of its buy (Apple: the `…MismatchError`s): its currencies, country and rate. The
    /// rule between the two, whichever of them is new: a new refund (`matchProblems`) or a restated buy with
    /// refunds standing against it (`restatedBuyProblems`).
    static func mismatches(refund: LineItemAmounts, buy: LineItemAmounts) -> [(name: String, field: String)] {
        var found: [(name: String, field: String)] = []
        if buy.pricingCurrency != refund.pricingCurrency {
            found.append(("PricingCurrencyMismatchError", "pricingCurrency"))
        }
        if buy.reportingCurrency != refund.reportingCurrency {
            found.append(("ReportingCurrencyMismatchError", "reportingCurrency"))
        }
        if buy.taxCountry != refund.taxCountry { found.append(("TaxCountryMismatchError", "taxCountry")) }
        if buy.exchangeRate != refund.exchangeRate { found.append(("ExchangeRateMismatchError", "exchangeRate")) }
        return found
    }

    /// A refund repeats its buy's currencies, country and rate, within a year of the buy.
    func matchProblems(_ refund: RefundLineItem, buy: LineItemAmounts) -> [ReportProblem] {
        let id = refund.lineItemId
        var problems = Self.mismatches(refund: refund.amounts, buy: buy).map {
            ReportProblem($0.name, field: $0.field, lineItem: id, "must match the buy")
        }
        // Apple names this error without describing it; a refund dated before the purchase it refunds is what its
        // name says (UNCONFIRMED). linkout dates its own refunds no earlier than their buy (`AppleLineItems.refund`).
        // A restatement or retraction keeps the date Apple accepted before (`RestatementCreationDateMismatchError`),
        // so one reported earlier can still be corrected.
        if refund.creationDate < buy.creationDate && refund.restatement != true {
            problems.append(
                .init(
                    "ReferencedCreationDateIncompatibleError",
                    field: "creationDate",
                    lineItem: id,
                    "a refund cannot be dated before the buy it refunds"
                )
            )
        }
        if refund.creationDate > Int64.saturating(buy.creationDate, plus: Self.year) {
            problems.append(
                .init(
                    "RefundNotAllowedCreationDateError",
                    field: "creationDate",
                    lineItem: id,
                    "a buy can be refunded for one year"
                )
            )
        }
        return problems
    }

    /// A buy restated (not withdrawn) while refunds of it stand: it must still be what they refund, in the same
    /// currencies, country and rate, for at least what they add up to. A new refund is held to the same rules
    /// from its side; a restatement must not make the ones Apple holds wrong (the money Apple would then hold
    /// says the seller kept more than the person paid, or less).
    func restatedBuyProblems(_ item: LineItem, before: [LineItem]) -> [ReportProblem] {
        guard item.isBuy, item.common.restatement == true, item.common.erroneouslySubmitted != true else { return [] }
        let id = item.common.lineItemId
        let refunds = PurchaseNet.standing(before).compactMap { standing -> RefundLineItem? in
            guard case .refund(let refund) = standing, refund.referenceLineItemId == id else { return nil }
            return refund
        }
        var problems: [ReportProblem] = []
        var named: Set<String> = []
        for refund in refunds {
            for mismatch in Self.mismatches(refund: refund.amounts, buy: item.common)
            where named.insert(mismatch.name).inserted {
                problems.append(
                    .init(
                        mismatch.name,
                        field: mismatch.field,
                        lineItem: id,
                        "must stay as the refunds that stand against this buy have it (\(refund.lineItemId))"
                    )
                )
            }
        }
        if !refunds.isEmpty, PurchaseNet.ofBuy(id, in: before + [item]) < 0 {
            problems.append(
                .init(
                    "IncorrectAmountTaxInclusiveError",
                    field: "amountTaxExclusive",
                    lineItem: id,
                    "the refunds that stand against this buy exceed its restated amount: retract them first"
                )
            )
        }
        return problems
    }

    /// A new refund's net: its buy's after every refund of it so far, this one included (Apple's example: 8000 −
    /// 2000 = 6000), "so far" being the order they happened in (`PurchaseNet`).
    func netProblems(_ refund: RefundLineItem, before: [LineItem]) -> [ReportProblem] {
        let id = refund.lineItemId
        let expectedNet = PurchaseNet.ofBuy(refund.referenceLineItemId, in: before + [.refund(refund)])
        if expectedNet < 0 && refund.erroneouslySubmitted != true {
            return [
                .init(
                    "IncorrectAmountTaxInclusiveError",
                    field: "amountTaxExclusive",
                    lineItem: id,
                    "refunds exceed the amount of the buy"
                )
            ]
        }
        guard refund.restatement != true, refund.netAmountTaxExclusive != expectedNet else { return [] }
        return [
            .init(
                "IncorrectNetAmountError",
                field: "netAmountTaxExclusive",
                lineItem: id,
                "netAmountTaxExclusive must be \(expectedNet): the buy's amount less all its refunds"
            )
        ]
    }

    /// A restatement or a retraction (of a buy or a refund) carries its buy's net recalculated: what stands
    /// once this version replaces the earlier ones (a retracted item stands for nothing), as Apple holds it.
    func correctionNetProblems(_ item: LineItem, before: [LineItem]) -> [ReportProblem] {
        guard item.common.restatement == true else { return [] }
        let expectedNet = max(0, PurchaseNet.ofBuy(PurchaseNet.buyId(of: item), in: before + [item]))
        guard item.common.netAmountTaxExclusive != expectedNet else { return [] }
        return [
            .init(
                "IncorrectNetAmountError",
                field: "netAmountTaxExclusive",
                lineItem: item.common.lineItemId,
                "netAmountTaxExclusive must be \(expectedNet): the buy's amount less the refunds that stand once "
                    + "this version replaces the earlier ones"
            )
        ]
    }
}
