/// App Store Server Notifications: stored before they are acknowledged, acted on exactly once.
extension Ledger {
    /// Stores a verified notification; true when it is new, false when its `notificationUUID` is known already.
    /// Returns once committed.
    public func storeNotification(_ notification: StoredNotification) throws(StorageError) -> Bool {
        try engine.storeNotification(notification)
    }

    /// Stored notifications, oldest first.
    public func notifications(unprocessedOnly: Bool = false, limit: Int = 500) throws(StorageError)
        -> [StoredNotification]
    {
        try engine.notifications(unprocessedOnly: unprocessedOnly, limit: limit)
    }

    public func notification(uuid: String) throws(StorageError) -> StoredNotification? {
        try engine.notification(uuid: uuid)
    }

    /// Acts on a notification and marks it processed in one transaction; nil when it was processed already.
    /// A known token takes Apple's values for the fields Apple sent; the result lists what changed.
    @discardableResult
    public func apply(_ change: NotificationChange) throws(StorageError) -> AppliedNotification? {
        try engine.apply(change)
    }

    /// A value from the ledger's settings (`last_history_pass`, ...).
    public func setting(named name: String) throws(StorageError) -> String? {
        try engine.setting(named: name)
    }

    public func setSetting(named name: String, to value: String) throws(StorageError) {
        try engine.setSetting(named: name, to: value)
    }

    /// Which token each of `lineItemIds` was posted for, among the tokens of the app `bundleId` (Apple: a
    /// `lineItemId` "must be unique per app").
    public func lineItemOwners(_ lineItemIds: [String], bundleId: String) throws(StorageError) -> [String: String] {
        try engine.lineItemOwners(lineItemIds, bundleId: bundleId)
    }
}
