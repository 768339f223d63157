extension ConnectionStateMachine {
    /// The client's bytes not yet parsed. Parsed bytes are skipped by an offset rather than removed one request at a
    /// time, and memory that a body or a burst of pipelined requests made the buffer grow by is given back.
    struct InputBuffer {
        private var bytes: [UInt8] = []
        private var start = 0

        var unread: ArraySlice<UInt8> { bytes[start...] }
        var count: Int { bytes.count - start }
        var isEmpty: Bool { start == bytes.count }

        mutating func append(_ newBytes: UnsafeRawBufferPointer) {
            bytes.append(contentsOf: newBytes)
        }

        /// Drops the unread bytes too, and the memory with them.
        mutating func removeAll() {
            bytes.removeAll()
            start = 0
        }

        /// The first `count` unread bytes are parsed.
        mutating func consume(_ count: Int) {
            start += count
            if start == bytes.count {
                // A buffer the size of a request head is kept for the next one; one that grew for a body's read or
                // a burst of pipelined requests is given back rather than held by a connection that may idle for
                // long.
                bytes.removeAll(keepingCapacity: bytes.capacity <= 16 * 1024)
                start = 0
            } else if bytes.capacity > 128 * 1024 && bytes.count - start <= 16 * 1024 {
                // A burst grew the buffer and little of it is left: move that to a small one and give the memory
                // back.
                bytes = Array(bytes[start...])
                start = 0
            } else if start >= 64 * 1024 {
                bytes.removeFirst(start)
                start = 0
            }
        }
    }
}
