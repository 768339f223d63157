/// The body of Get Notification History (App Store Server API, `POST /inApps/v1/notifications/history`; Apple: "Get
/// Notification History"): recovery for notifications that never arrived or were refused. Apple: dates within the past
/// 180 days; "Include either the transactionId or the notificationType in your query, but not both".
public struct NotificationHistoryRequest: Sendable, Equatable, Codable {
    /// UNIX ms, inclusive.
    public var startDate: Int64
    /// UNIX ms, exclusive.
    public var endDate: Int64
    public var notificationType: NotificationType?
    public var notificationSubtype: NotificationSubtype?
    /// Only notifications Apple failed to deliver.
    public var onlyFailures: Bool?
    public var transactionId: String?

    public init(
        startDate: Int64,
        endDate: Int64,
        notificationType: NotificationType? = nil,
        notificationSubtype: NotificationSubtype? = nil,
        onlyFailures: Bool? = nil,
        transactionId: String? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.onlyFailures = onlyFailures
        self.transactionId = transactionId
    }

    /// External purchase token notifications between two moments: what a receiver replays after an outage.
    public static func externalPurchaseTokens(
        from startDate: Int64,
        to endDate: Int64,
        onlyFailures: Bool? = nil
    ) -> NotificationHistoryRequest {
        NotificationHistoryRequest(
            startDate: startDate,
            endDate: endDate,
            notificationType: .externalPurchaseToken,
            onlyFailures: onlyFailures
        )
    }
}

/// One page of notification history. `hasMore` says another page waits behind `paginationToken`.
public struct NotificationHistoryResponse: Sendable, Equatable, Codable {
    public var notificationHistory: [NotificationHistoryItem]
    public var hasMore: Bool
    public var paginationToken: String?
    /// Items of the page that are no notification (no `signedPayload` text): skipped, the rest read. One such
    /// item threw the whole page away, its valid notifications with it, and the window failed alike on every try.
    public var skippedItems = 0

    public init(notificationHistory: [NotificationHistoryItem], hasMore: Bool, paginationToken: String?) {
        self.notificationHistory = notificationHistory
        self.hasMore = hasMore
        self.paginationToken = paginationToken
    }

    /// The signed payloads of the page, each to go through `SignedPayloadVerifier` like a delivered one.
    public var signedPayloads: [String] { notificationHistory.map(\.signedPayload) }

    private enum CodingKeys: String, CodingKey {
        case notificationHistory, hasMore, paginationToken
    }

    /// One item of the list, or nil when it is no notification.
    private struct ItemIfReadable: Decodable {
        let item: NotificationHistoryItem?

        init(from decoder: any Decoder) throws {
            item = try? NotificationHistoryItem(from: decoder)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let items = try container.decodeIfPresent([ItemIfReadable].self, forKey: .notificationHistory) ?? []
        notificationHistory = items.compactMap(\.item)
        skippedItems = items.count - notificationHistory.count
        hasMore = try container.decodeIfPresent(Bool.self, forKey: .hasMore) ?? false
        paginationToken = try container.decodeIfPresent(String.self, forKey: .paginationToken)
    }
}

/// A notification as Apple kept it, with its delivery attempts.
public struct NotificationHistoryItem: Sendable, Equatable, Codable {
    /// The same JWS Apple POSTs to the notification URL.
    public var signedPayload: String
    public var sendAttempts: [SendAttempt]?

    public init(signedPayload: String, sendAttempts: [SendAttempt]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }

    private enum CodingKeys: String, CodingKey {
        case signedPayload, sendAttempts
    }

    /// The payload is what counts: attempts of another shape than Apple documents leave the item readable.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signedPayload = try container.decode(String.self, forKey: .signedPayload)
        sendAttempts = try? container.decodeIfPresent([SendAttempt].self, forKey: .sendAttempts)
    }

    public struct SendAttempt: Sendable, Equatable, Codable {
        /// UNIX ms.
        public var attemptDate: Int64?
        /// `SUCCESS`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, … kept as sent.
        public var sendAttemptResult: String?

        public init(attemptDate: Int64? = nil, sendAttemptResult: String? = nil) {
            self.attemptDate = attemptDate
            self.sendAttemptResult = sendAttemptResult
        }
    }
}
