import Synchronization

/// Open connections by client, held under `cap` each (`maxConnectionsPerClient`). An IPv6 client counts by its
/// /64, as rate limits count it (`PeerAddress.clientKey`): one host could otherwise open the cap's worth from each
/// of its addresses.
final class ClientConnectionCounts: Sendable {
    private let cap: Int
    private let counts = Mutex<[String: Int]>([:])

    init(cap: Int) {
        self.cap = cap
    }

    /// Counts a new connection from `address`; false (and nothing counted) when its client is at the cap.
    func admit(_ address: String) -> Bool {
        let client = PeerAddress.clientKey(address)
        return counts.withLock { counts in
            let open = counts[client, default: 0]
            guard open < cap else { return false }
            counts[client] = open + 1
            return true
        }
    }

    /// A connection `admit` counted has closed.
    func release(_ address: String) {
        let client = PeerAddress.clientKey(address)
        counts.withLock { counts in
            guard let open = counts[client] else { return }
            // Forget clients with nothing open, so the table holds only current ones.
            counts[client] = open > 1 ? open - 1 : nil
        }
    }
}
