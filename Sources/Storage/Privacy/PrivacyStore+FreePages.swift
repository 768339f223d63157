/// The ledger file's free pages written over with zeros (`linkout erase`, the retention pass's one zeroing).
extension PrivacyStore {
    /// Writes zeros over every free page of the ledger's file (SQLite). The ledger zeroes what it frees
    /// (`secure_delete = ON`, `SQLDatabase`), but a ledger written by a release before 0.35.0 ran with `FAST`,
    /// which left the pages a rewritten row gave up as they were: an event's processing rewrote its row, and a
    /// copy of the file still read the person's address from the free list after an erasure. The free pages are
    /// taken by a scratch table of zeros a chunk at a time (each its own short transaction: the server's writes
    /// wait for one chunk, never for the whole), never past the free list (the file grows by a page at most, where
    /// the last free pages meet a full leaf), then given back, also when a chunk fails. Returns about how many
    /// pages were zeroed.
    @discardableResult
    public func zeroFreePages() throws(StorageError) -> Int64 {
        guard database.dialect == .sqlite else { return 0 }
        let zeroed: Int64
        do {
            zeroed = try fillFreePages()
        } catch {
            try? giveBackScratchPages()
            throw error
        }
        try giveBackScratchPages()
        return zeroed
    }

    /// Takes the free pages into the scratch table, which each chunk makes if it is not there (another run, the
    /// server's or a command's, may have given it back meanwhile).
    private func fillFreePages() throws(StorageError) -> Int64 {
        var zeroed: Int64 = 0
        // Bounded: others' writes free pages meanwhile, and a chunk is at most `zeroPagesPerChunk`.
        let start = try freePageCount()
        for _ in 0..<(start / Self.zeroPagesPerChunk + 100) {
            let taken = try database.writer.write { connection throws(StorageError) -> Int64 in
                let free = try connection.query("PRAGMA freelist_count").first?.first?.integer ?? 0
                guard free > 0 else { return 0 }
                // What an overflow page holds: the page but its 4-byte link.
                let overflow = (try connection.query("PRAGMA page_size").first?.first?.integer ?? 4096) - 4
                // A row of `pages` overflow pages, its first bytes on a leaf page (SQLite's smallest local part,
                // `minLocal`, when the rest fills whole overflow pages): two pages are left for the leaf and an
                // interior page it may need, so the file is not made longer. The last free pages go to rows of
                // half a page.
                let pages = min(Self.zeroPagesPerChunk, max(free - 2, 0))
                let minLocal = (overflow - 8) * 32 / 255 - 23
                let bytes = pages > 0 ? minLocal + pages * overflow - 8 : overflow / 2
                try connection.execute("CREATE TABLE IF NOT EXISTS \(Self.scratchTable) (zeros BLOB NOT NULL)")
                try connection.query(
                    "INSERT INTO \(Self.scratchTable) (zeros) VALUES (zeroblob(?))",
                    [.integer(bytes)]
                )
                return max(pages, 1)
            }
            guard taken > 0 else { break }
            zeroed += taken
        }
        return zeroed
    }

    /// Gives the scratch table's pages back and drops it: a few rows a transaction, with `FAST` (the pages hold
    /// zeros already, so only the free list is written; with `ON` each page would be written again). Nothing when
    /// there is none.
    private func giveBackScratchPages() throws(StorageError) {
        guard database.dialect == .sqlite else { return }
        let name = Self.scratchTable
        while try database.writer.write({ connection throws(StorageError) -> Bool in
            let exists = try connection.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                [.text(name)]
            )
            guard !exists.isEmpty else { return false }
            try connection.execute("PRAGMA secure_delete = FAST")
            defer { _ = try? connection.execute("PRAGMA secure_delete = ON") }
            return try connection.change("DELETE FROM \(name) WHERE rowid IN (SELECT rowid FROM \(name) LIMIT 4)", [])
                > 0
        }) {}
        try database.writer.write { connection throws(StorageError) in
            try connection.execute("DROP TABLE IF EXISTS \(name)")
        }
    }

    /// Finishes a zeroing a killed run left (its scratch table still there): the free pages it had not reached yet
    /// may hold what an erasure, already recorded, rewrote. True when there was one. The server does it at start.
    public func finishCutShortZeroing() throws(StorageError) -> Bool {
        guard database.dialect == .sqlite else { return false }
        let left = try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                [.text(Self.scratchTable)]
            )
        }
        guard !left.isEmpty else { return false }
        try zeroFreePages()
        return true
    }

    /// The ledger's free pages (0 on PostgreSQL).
    public func freePageCount() throws(StorageError) -> Int64 {
        guard database.dialect == .sqlite else { return 0 }
        return try database.readers.read { connection throws(StorageError) in
            try connection.query("PRAGMA freelist_count").first?.first?.integer ?? 0
        }
    }

    static let scratchTable = "free_page_zeros"
    /// About a mebibyte of zeros a transaction.
    static let zeroPagesPerChunk: Int64 = 256
}
