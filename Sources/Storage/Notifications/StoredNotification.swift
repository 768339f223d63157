public import Domain

/// An App Store Server Notification as received: stored (deduplicated by `notificationUUID`, Apple: "Use this
/// value to identify a duplicate notification") after its signature verified and before it is acknowledged,
/// then acted on from here exactly once, so a crash between the two loses nothing.
public struct StoredNotification: Sendable, Equatable, Codable {
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    public var externalPurchaseId: ExternalPurchaseID?
    /// `production` or `sandbox` (the `SANDBOX` prefix of `externalPurchaseId`), when the payload says.
    public var environment: Environment?
    /// UNIX ms when Apple signed it.
    public var signedDate: Int64
    public var receivedAt: Int64
    /// `delivery` (Apple POSTed it) or `history` (fetched with Get Notification History).
    public var source: NotificationSource
    /// The JWS exactly as received; never logged.
    public var signedPayload: String
    public var processedAt: Int64?
    /// What acting on it came to (`unrecognized_reported`, `due_now`, `recorded`, ...).
    public var outcome: NotificationOutcome?

    public init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        externalPurchaseId: ExternalPurchaseID?,
        environment: Environment?,
        signedDate: Int64,
        receivedAt: Int64,
        source: NotificationSource,
        signedPayload: String,
        processedAt: Int64? = nil,
        outcome: NotificationOutcome? = nil
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.externalPurchaseId = externalPurchaseId
        self.environment = environment
        self.signedDate = signedDate
        self.receivedAt = receivedAt
        self.source = source
        self.signedPayload = signedPayload
        self.processedAt = processedAt
        self.outcome = outcome
    }
}

/// What acting on one stored notification writes, in one transaction that also marks it processed; a
/// notification already processed changes nothing (a redelivery or a second pass raced the first).
public struct NotificationChange: Sendable {
    public var notificationUUID: String
    public var at: Int64
    /// The outcome recorded on the notification.
    public var outcome: NotificationOutcome
    /// A token to record when the ledger has none with its id (source `notification`), with its checkout.
    public var token: TokenFields?
    public var checkoutId: CheckoutID?
    /// A report to put in the outbox when `token` was recorded by this change (`UNRECOGNIZED_TOKEN`).
    public var reportIfRecorded: StoredReport?
    /// The outcome when `token` turned out to be known after all (a visit was ingested meanwhile): its report is
    /// made due now instead.
    public var outcomeIfKnown: NotificationOutcome?
    /// A known token whose report is due now (Apple announced it as unreported): the `NO_LINE_ITEM` wait and the
    /// payment hold end for it, and a pending report of it is sent at once.
    public var dueNow: ExternalPurchaseID?
    /// Something the operator should hear of, said at warning level once the change is applied; not stored.
    public var warning: String?

    public init(
        notificationUUID: String,
        at: Int64,
        outcome: NotificationOutcome,
        token: TokenFields? = nil,
        checkoutId: CheckoutID? = nil,
        reportIfRecorded: StoredReport? = nil,
        outcomeIfKnown: NotificationOutcome? = nil,
        dueNow: ExternalPurchaseID? = nil
    ) {
        self.notificationUUID = notificationUUID
        self.at = at
        self.outcome = outcome
        self.token = token
        self.checkoutId = checkoutId
        self.reportIfRecorded = reportIfRecorded
        self.outcomeIfKnown = outcomeIfKnown
        self.dueNow = dueNow
    }
}
