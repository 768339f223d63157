import Foundation
public import Outbound

/// Paddle Billing's API (v1; Paddle API reference: Transactions) over the libcurl client: create a transaction for a
/// checkout, read one back (with its address, for the customer's country), and find the transaction of an intent again.
/// Blocking: call it from a worker or background thread.
public struct PaddleAPI: Sendable {
    public let configuration: PaddleConfiguration
    private let client: HTTPClient

    public init(configuration: PaddleConfiguration, client: HTTPClient? = nil) {
        self.configuration = configuration
        self.client =
            client
            ?? .forProvider(
                connectTimeout: configuration.connectTimeout,
                attemptTimeout: configuration.attemptTimeout,
                caFile: configuration.caFile,
                proxy: configuration.proxy
            )
    }

    /// `POST /transactions`: the new transaction's id. Paddle offers no idempotency key (docs/provider-facts.md):
    /// callers keep the id and never call this twice for one intent (`PaddlePaymentProvider`).
    public func createTransaction(_ body: [UInt8]) throws(PaddleAPIError) -> String {
        let response = try send("POST", "/transactions", body: body)
        let data = try Self.data(response)
        guard let id = data["id"] as? String, id.hasPrefix("txn_") else {
            throw PaddleAPIError(.unexpectedAnswer, "Paddle answered without a transaction id", status: response.status)
        }
        return id
    }

    /// `GET /transactions/{id}?include=address`: the transaction with its address's country (notifications carry only
    /// `address_id`; Paddle API reference: Get a transaction).
    public func transaction(_ id: String) throws(PaddleAPIError) -> PaddleTransaction {
        guard id.hasPrefix("txn_"), id.utf8.allSatisfy(Self.isIDByte) else {
            throw PaddleAPIError(.refused, "not a transaction id")
        }
        let response = try send("GET", "/transactions/\(id)?include=address", body: nil)
        do {
            return try PaddleTransaction(ProviderJSON(try Self.data(response), path: "data"))
        } catch let error as ProviderJSONError {
            throw PaddleAPIError(.unexpectedAnswer, "Paddle's transaction: \(error)", status: response.status)
        } catch let error as PaddleAPIError {
            throw error
        } catch {
            throw PaddleAPIError(.unexpectedAnswer, "Paddle's transaction could not be read", status: response.status)
        }
    }

    /// The open transaction (`draft` or `ready`) created since `since` (UNIX seconds) whose `custom_data` names
    /// `intentId`, if Paddle made one. Used after a call whose answer was lost (a timeout, a 5xx): Paddle may have
    /// created the transaction anyway. Newest first, one page of up to 200 (Paddle API reference: List transactions;
    /// "Filter and sort" for `created_at[GTE]`).
    public func openTransaction(intentId: String, since: Int64) throws(PaddleAPIError) -> String? {
        let date = Self.rfc3339(seconds: since)
        let response = try send(
            "GET",
            "/transactions?status=draft,ready&created_at%5BGTE%5D=\(date)&order_by=created_at%5BDESC%5D&per_page=200",
            body: nil
        )
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard let list = object?["data"] as? [[String: Any]] else {
            throw PaddleAPIError(
                .unexpectedAnswer,
                "Paddle's transaction list could not be read",
                status: response.status
            )
        }
        for transaction in list {
            let custom = transaction["custom_data"] as? [String: Any]
            if custom?["linkout_intent_id"] as? String == intentId, let id = transaction["id"] as? String {
                return id
            }
        }
        return nil
    }

    /// Lists Paddle's event types (`GET /event-types`): readable with any API key, changes nothing.
    public func readEventTypes() throws(PaddleAPIError) {
        let response = try send("GET", "/event-types", body: nil)
        // Only Paddle's list shows Paddle read the key: any 2xx page (a proxy's, a wrong apiBase) is not.
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard object?["data"] is [Any] else {
            throw PaddleAPIError(
                .unexpectedAnswer,
                "\(configuration.apiBase) answered \(response.status) without Paddle's event types: check apiBase",
                status: response.status
            )
        }
    }

    private func send(_ method: String, _ path: String, body: [UInt8]?) throws(PaddleAPIError) -> HTTPClientResponse {
        var headers: [(name: String, value: String)] = [
            ("Authorization", "Bearer \(configuration.apiKey)"),
            ("Paddle-Version", "1"),
            ("Accept", "application/json"),
        ]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let response: HTTPClientResponse
        do {
            response = try client.perform(
                HTTPClientRequest(method: method, url: configuration.apiBase + path, headers: headers, body: body)
            )
        } catch {
            // No answer: a POST may or may not have been carried out.
            throw PaddleAPIError(.noAnswer, "Paddle could not be reached: \(error.description)")
                .masking(configuration.apiKey)
        }
        guard (200..<300).contains(response.status) else {
            throw Self.error(from: response).masking(configuration.apiKey)
        }
        return response
    }

    private static func data(_ response: HTTPClientResponse) throws(PaddleAPIError) -> [String: Any] {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard let data = object?["data"] as? [String: Any] else {
            throw PaddleAPIError(.unexpectedAnswer, "Paddle answered without data", status: response.status)
        }
        return data
    }

    /// Paddle's error body: `{"error":{"type","code","detail"}}`. 429 (`Retry-After`) and 5xx are worth another
    /// try later; other 4xx are not.
    static func error(from response: HTTPClientResponse) -> PaddleAPIError {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        let detail = (error?["detail"] as? String).map { "Paddle: \($0)" } ?? "Paddle answered \(response.status)"
        let kind: PaddleAPIError.Kind =
            switch response.status {
            case 429: .rateLimited
            case 500...: .serverError
            default: .refused
            }
        return PaddleAPIError(kind, detail, status: response.status, code: error?["code"] as? String)
    }

    private static func isIDByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    /// `2026-05-02T10:18:49Z`.
    static func rfc3339(seconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// Why a Paddle call failed. `message` never contains the API key: Paddle's messages pass through
/// `PaymentError.redactingSecrets`, and every error of a call is masked with the configured key (`masking`).
public struct PaddleAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No HTTP answer (connection, timeout): a POST may have been carried out.
        case noAnswer
        /// 429: Paddle's rate limiter refused before doing anything.
        case rateLimited
        /// 5xx: Paddle failed; a POST may have been carried out.
        case serverError
        /// Another 4xx: the request is wrong or the key is; retrying will not help.
        case refused
        /// A 2xx that could not be read.
        case unexpectedAnswer
    }

    public var kind: Kind
    public var message: String
    public var status: Int?
    public var code: String?

    public init(_ kind: Kind, _ message: String, status: Int? = nil, code: String? = nil) {
        self.kind = kind
        self.message = PaddleAPIError.redacting(message)
        self.status = status
        self.code = code.map(PaddleAPIError.redacting)
    }

    /// The error with `secret` (the configured API key) masked wherever the answer echoed it: a key of Paddle's
    /// older form has no `pdl_` to be known by, and a proxy or Paddle itself may quote the `Authorization` header.
    func masking(_ secret: String) -> PaddleAPIError {
        guard !secret.isEmpty else { return self }
        var masked = self
        masked.message = message.replacingOccurrences(of: secret, with: "[redacted]")
        masked.code = code?.replacingOccurrences(of: secret, with: "[redacted]")
        return masked
    }

    /// Whether the request may have taken effect although no good answer came back.
    public var mayHaveTakenEffect: Bool { kind == .noAnswer || kind == .serverError || kind == .unexpectedAnswer }

    public var description: String {
        "PaddleAPIError(\(kind)\(status.map { ", HTTP \($0)" } ?? "")\(code.map { ", \($0)" } ?? "")): \(message)"
    }

    /// Paddle's API keys (`pdl_live_apikey_…`, `pdl_sdbx_apikey_…`) and notification secrets (`pdl_ntfset_…`).
    static func redacting(_ text: String) -> String {
        guard text.contains("pdl_") else { return PaymentError.redactingSecrets(text) }
        var result = ""
        var word = ""
        func flush() {
            result += word.hasPrefix("pdl_") ? "[redacted]" : word
            word = ""
        }
        for character in text {
            if character.isLetter || character.isNumber || character == "_" || character == "*" || character == "+" {
                word.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return PaymentError.redactingSecrets(result)
    }
}
