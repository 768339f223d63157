import Domain

/// Keeps `money_line_items` and the daily roll-up `money_daily` in step with `line_items` and `reports`, inside
/// the transaction that changes them, so the money view never disagrees with what is stored or reported. Each
/// change recomputes one line item's row from its latest version and adds the difference to the roll-up
/// (`UPDATE … SET x = x + ?` through an upsert), which several instances on one PostgreSQL database may do at
/// once; writers of one line item take turns (`SQLDialect.serializeOnKey`).
enum MoneyRows {
    /// Recomputes the money row of `lineItemId` of the app and environment of `externalPurchaseId`'s token.
    static func refresh(
        lineItemId: LineItemID,
        externalPurchaseId: ExternalPurchaseID,
        in connection: any SQLConnection,
        dialect: SQLDialect,
        regimes: [CommissionRegime],
        serialize: Bool = true
    ) throws(StorageError) {
        guard
            let token = try connection.query(
                "SELECT bundle_id, environment FROM tokens WHERE external_purchase_id = ?",
                [.id(externalPurchaseId)]
            ).first, let bundleId = token[0].id(BundleID.self), let environment = token[1].text
        else { return }
        // A rebuild holds its own lock instead: a lock per item would fill PostgreSQL's lock table.
        if serialize, let serialize = dialect.serializeOnKey {
            try connection.query(serialize, [.text("money\u{0}\(environment)\u{0}\(bundleId)\u{0}\(lineItemId)")])
        }
        let old = try connection.query(
            "SELECT \(MoneyStore.columns) FROM money_line_items WHERE environment = ? AND bundle_id = ? AND line_item_id = ?",
            [.text(environment), .id(bundleId), .id(lineItemId)]
        ).firstDecoded(MoneyStore.moneyLineItem)
        let new = try current(
            lineItemId: lineItemId,
            bundleId: bundleId,
            environment: environment,
            in: connection,
            regimes: regimes
        )
        if let old { try addToDay(old, sign: -1, in: connection) }
        if let new {
            try upsert(new, in: connection)
            try addToDay(new, sign: 1, in: connection)
        } else if old != nil {
            try connection.query(
                "DELETE FROM money_line_items WHERE environment = ? AND bundle_id = ? AND line_item_id = ?",
                [.text(environment), .id(bundleId), .id(lineItemId)]
            )
        }
        // A refund takes its product, its commission reversal and its pricing amount from its buy's row: when
        // the buy changes (stored after the refund, set aside, restated, classified again), so do its refunds.
        if (new ?? old)?.isRefund == false {
            let refunds = try connection.query(
                """
                SELECT line_item_id, external_purchase_id FROM money_line_items
                WHERE environment = ? AND bundle_id = ? AND reference_line_item_id = ? AND event_type = 'REFUND'
                """,
                [.text(environment), .id(bundleId), .id(lineItemId)]
            )
            for refund in refunds {
                try self.refresh(
                    lineItemId: refund[0].id() ?? "",
                    externalPurchaseId: refund[1].id() ?? "",
                    in: connection,
                    dialect: dialect,
                    regimes: regimes,
                    serialize: serialize
                )
            }
        }
    }

    /// `items` with the buys first and the refunds after them, each group in its order: a refund is classified
    /// from its buy's row, so the buy's must be current first (a batch may list a refund before its buy).
    static func buysFirst<Item>(_ items: [Item], body: (Item) -> String) -> [Item] {
        let refund = items.map { LineItemBody.decode(body($0))?.isRefund == true }
        return zip(items, refund).filter { !$0.1 }.map(\.0) + zip(items, refund).filter(\.1).map(\.0)
    }

    /// The row the latest version of the line item makes, or nil when it has none that counts.
    private static func current(
        lineItemId: LineItemID,
        bundleId: BundleID,
        environment: String,
        in connection: any SQLConnection,
        regimes: [CommissionRegime]
    ) throws(StorageError) -> MoneyLineItem? {
        // Versions Apple refused (set aside for correction) are not what Apple holds; the latest other one is.
        guard
            let row = try connection.query(
                """
                SELECT l.id, l.external_purchase_id, l.body, l.report_request_identifier, l.held_since,
                    t.token_created_at, (SELECT min(landed.visited_at) FROM (
                        \(TokenVisits.select("visited_at", token: "l.external_purchase_id", firstSeenAt: "t.first_seen_at"))
                    ) AS landed), r.state, r.accepted_at
                FROM line_items l JOIN tokens t ON t.external_purchase_id = l.external_purchase_id
                LEFT JOIN reports r ON r.request_identifier = l.report_request_identifier
                WHERE l.line_item_id = ? AND t.bundle_id = ? AND t.environment = ? AND l.correction IS NULL
                ORDER BY l.id DESC LIMIT 1
                """,
                [.id(lineItemId), .id(bundleId), .text(environment)]
            ).first,
            let body = LineItemBody.decode(row[2].text ?? "")
        else { return nil }
        let referenced = try body.referenceLineItemId.flatMap { reference throws(StorageError) in
            try connection.query(
                """
                SELECT \(MoneyStore.columns) FROM money_line_items
                WHERE environment = ? AND bundle_id = ? AND line_item_id = ?
                """,
                [.text(environment), .id(bundleId), .id(reference)]
            ).firstDecoded(MoneyStore.moneyLineItem)
        }
        // A renewal's payment row (what it charged) before its invoice's (the period's price before credits). The
        // markers of refunds, disputes and reversals name the line item too and are no price; the key breaks the
        // remaining ties, so both engines pick the same row.
        let charge = try connection.query(
            """
            SELECT p.provider, c.amount_total, p.currency FROM purchase_charges c
            JOIN purchases p ON p.purchase_id = c.purchase_id
            WHERE c.line_item_id = ? AND c.charge_key NOT LIKE 'refund:%' AND c.charge_key NOT LIKE 'reversal:%'
            ORDER BY c.created_at, c.charge_key LIKE 'invoice:%', c.charge_key LIMIT 1
            """,
            [.id(body.isRefund ? (body.referenceLineItemId ?? lineItemId) : lineItemId)]
        ).first
        return try moneyLineItem(
            body,
            version: row,
            key: (environment, bundleId, lineItemId),
            referenced: referenced,
            charge: charge,
            regimes: regimes
        )
    }

    /// The money row of a version (`row`: id, token, body, report, held, token creation, first landing, report
    /// state, acceptance), its referenced buy's row and its provider charge.
    private static func moneyLineItem(
        _ body: LineItemBody,
        version row: [SQLValue],
        key: (environment: String, bundleId: BundleID, lineItemId: LineItemID),
        referenced: MoneyLineItem?,
        charge: [SQLValue]?,
        regimes: [CommissionRegime]
    ) throws(StorageError) -> MoneyLineItem {
        let (environment, bundleId, lineItemId) = key
        let (pricing, source) = pricingAmount(
            body,
            chargeMinor: charge?[1].integer,
            chargeCurrency: charge?[2].text,
            refundedBuy: referenced
        )
        let classification = CommissionClassification.classify(
            .init(
                taxCountry: body.taxCountry,
                creationDate: body.creationDate,
                amountTaxExclusive: body.amountTaxExclusive,
                isRefund: body.isRefund,
                retracted: body.erroneouslySubmitted == true,
                subscriptionDaysOfPaidService: body.subscriptionDaysOfPaidService,
                tokenCreationDate: row[5].integer,
                landedAt: row[6].integer,
                refundedBuy: referenced?.isRefund == false ? referenced?.classification : nil,
                // A subscription item's reference is its SUBSCRIPTION_START (Apple's rule).
                subscriptionStart: !body.isRefund && referenced?.isRefund == false ? referenced?.classification : nil
            ),
            regimes: regimes
        )
        return MoneyLineItem(
            environment: try SQLValue.text(environment).closedSet("tokens.environment"),
            bundleId: bundleId,
            lineItemId: lineItemId,
            lineItemRow: row[0].integer ?? 0,
            externalPurchaseId: row[1].id() ?? "",
            creationDate: body.creationDate,
            eventType: body.eventType,
            productId: body.productIdentifier.map(ProductID.init) ?? referenced?.productId ?? "",
            productType: body.productType ?? referenced?.productType ?? "",
            subscriptionEvent: body.subscriptionEvent,
            quantity: body.quantity,
            referenceLineItemId: body.referenceLineItemId,
            amountTaxInclusive: body.amountTaxInclusive,
            amountTaxExclusive: body.amountTaxExclusive,
            taxAmount: body.taxAmount,
            netAmountTaxExclusive: body.netAmountTaxExclusive,
            reportingCurrency: body.reportingCurrency,
            pricingCurrency: body.pricingCurrency,
            pricingAmount: pricing,
            pricingAmountSource: source,
            exchangeRate: body.exchangeRateText,
            taxCountry: body.taxCountry,
            provider: charge?[0].id() ?? "backend",
            retracted: body.erroneouslySubmitted == true,
            held: row[4].integer != nil,
            reportRequestIdentifier: row[3].id(),
            reportState: try row[7].closedSetIfPresent("reports.state"),
            acceptedAt: row[8].integer,
            classification: classification
        )
    }

    /// The tax-inclusive amount in milli-units of the pricing currency: the reported amount when the currencies
    /// agree; for a buy made from a provider's charge in that currency, the charge's minor units scaled by the
    /// currency's exponent (exact); for a refund of a buy in the same pricing currency, the buy's pricing amount
    /// in proportion to the reported amounts (a full refund nets to zero); otherwise derived from Apple's
    /// `exchangeRate` in integers. When none works it is 0 (`unknown`): a reporting-currency figure in a
    /// pricing-currency column would be nonsense.
    static func pricingAmount(
        _ body: LineItemBody,
        chargeMinor: Int64?,
        chargeCurrency: String?,
        refundedBuy: MoneyLineItem? = nil
    ) -> (Int64, MoneyLineItem.PricingAmountSource) {
        if body.pricingCurrency == body.reportingCurrency { return (body.amountTaxInclusive, .reported) }
        if !body.isRefund, let chargeMinor, chargeCurrency?.uppercased() == body.pricingCurrency.rawValue {
            return (CurrencyExponent.milliUnits(chargeMinor, currency: body.pricingCurrency.rawValue), .charge)
        }
        if body.isRefund, let buy = refundedBuy, !buy.isRefund, buy.pricingCurrency == body.pricingCurrency,
            buy.reportingCurrency == body.reportingCurrency, buy.pricingAmountSource != .unknown,
            buy.amountTaxInclusive != 0,
            let share = ExchangeRateFraction.scaled(
                buy.pricingAmount,
                by: UInt128(body.amountTaxInclusive.magnitude),
                over: UInt128(buy.amountTaxInclusive.magnitude)
            )
        {
            let sameSign = (body.amountTaxInclusive < 0) == (buy.amountTaxInclusive < 0)
            return (sameSign ? share : -share, .buy)
        }
        guard let rate = body.exchangeRateText.flatMap(ExchangeRateFraction.init),
            let pricing = rate.pricing(fromReported: body.amountTaxInclusive)
        else { return (0, .unknown) }
        return (pricing, .exchangeRate)
    }
}
