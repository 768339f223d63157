/// The stores over the ledger's tables, one per concern. Each is a small value over the ledger's database,
/// made on access.
extension Ledger {
    /// Tokens, landing visits, checkouts and checkout intents.
    public var tokens: TokenStore { TokenStore(database: database, visitRecorder: visitRecorder) }
    /// The report outbox: line items, reports, Apple's rejections and the line items held for a token.
    public var reports: ReportStore { ReportStore(database: database, instance: instance) }
    /// Payment sessions, provider events, purchases and their charges, and the events held for an exchange rate.
    public var payments: PaymentStore { PaymentStore(database: database) }
    /// Redemption codes and the entitlement webhook outbox.
    public var entitlements: EntitlementStore { EntitlementStore(database: database, instance: instance) }
    /// The customer credentials apps check their entitlements with.
    public var credentials: CredentialStore { CredentialStore(database: database) }
    /// The keys that sign the entitlements apps verify.
    public var signingKeys: SigningKeyStore { SigningKeyStore(database: database) }
    /// The audit log: who changed what Apple, the provider or the backend receives.
    public var audit: AuditStore { AuditStore(database: database) }
    /// A person's data in stored bodies, found and removed (`linkout erase`, the retention pass).
    public var privacy: PrivacyStore { PrivacyStore(database: database) }
    /// App Store Server Notifications and the recovery of their history.
    public var notifications: NotificationStore { NotificationStore(database: database) }
    /// Named values: progress markers and secrets.
    public var settings: SettingsStore { SettingsStore(database: database) }
    /// The operator dashboard's sign-in sessions.
    public var adminSessions: AdminSessionStore { AdminSessionStore(database: database) }
    /// The monthly close: a month's tokens and line items, and those Apple has not accepted.
    public var monthlyClose: CloseStore { CloseStore(database: database) }
    /// Line items as Apple sees them, in milli-units, with their commission estimate, and the daily roll-up.
    public var money: MoneyStore { MoneyStore(database: database) }
    /// The operator dashboard's reads.
    public var dashboard: DashboardStore { DashboardStore(database: database) }
}
