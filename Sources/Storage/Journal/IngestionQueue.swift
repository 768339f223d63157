/// What waits for the ingester, in journal order: visits held in memory, and, once `memoryLimit` wait, a range
/// of sequences left on disk in the journal's segments, read back when the memory part is done. So a flood the
/// tables cannot keep up with costs disk rather than memory (a few hundred bytes a visit where a visit held in
/// memory costs about a kilobyte), and landings are answered at the journal's pace.
struct IngestionQueue {
    /// Journaled visits from `first` through `last` that only the journal holds (`count` of them; sequences of
    /// appends that failed are gaps). `oldestAt` is when the first of them landed (a lower bound once some were
    /// read back).
    struct OnDisk {
        var first: Int64
        var last: Int64
        var count: Int
        var oldestAt: Int64
    }

    /// What the ingester takes next.
    enum Next {
        case inMemory([JournalRecord])
        case onDisk(from: Int64, through: Int64)
        case nothing
    }

    let memoryLimit: Int
    /// Visits in memory from `head` on: taking a batch moves `head` instead of shifting what follows.
    private var memory: [JournalRecord] = []
    private var head = 0
    private(set) var onDisk: OnDisk?
    /// The batch being committed: still waiting as far as the backlog is concerned.
    private var inFlight = 0
    private var inFlightOldestAt: Int64?

    init(memoryLimit: Int) {
        self.memoryLimit = memoryLimit
    }

    var waiting: Int { memory.count - head + (onDisk?.count ?? 0) + inFlight }

    var backlog: IngestionBacklog {
        let oldest = inFlight > 0 ? inFlightOldestAt : head < memory.count ? memory[head].visit.at : onDisk?.oldestAt
        return IngestionBacklog(visits: waiting, oldestAt: oldest)
    }

    var isEmpty: Bool { head == memory.count && onDisk == nil }

    /// Visits just made durable in the journal. Once the disk holds some, later ones stay there too, so the
    /// tables take them in order.
    mutating func add(_ batch: [JournalRecord]) {
        guard let first = batch.first, let last = batch.last else { return }
        if var disk = onDisk {
            disk.last = last.sequence
            disk.count += batch.count
            onDisk = disk
        } else if waiting + batch.count > memoryLimit {
            onDisk = OnDisk(first: first.sequence, last: last.sequence, count: batch.count, oldestAt: first.visit.at)
        } else {
            memory.append(contentsOf: batch)
        }
    }

    /// Up to `limit` visits from memory while it holds any (counted as in flight until `finished`), else the
    /// range to read back from disk.
    mutating func next(_ limit: Int) -> Next {
        if head < memory.count {
            let end = min(head + limit, memory.count)
            let batch = Array(memory[head..<end])
            head = end
            if head == memory.count {
                // Kept for the next burst while small; a long backlog's array is given back.
                memory.removeAll(keepingCapacity: memory.capacity <= 65536)
                head = 0
            } else if head >= 65536 && head * 2 >= memory.count {
                // The front is dead weight once it is half the array: dropped in one copy, not per batch.
                memory.removeFirst(head)
                head = 0
            }
            startFlight(batch)
            return .inMemory(batch)
        }
        guard let disk = onDisk else { return .nothing }
        return .onDisk(from: disk.first, through: disk.last)
    }

    /// A batch read back from disk is being committed: it leaves the disk range.
    mutating func tookFromDisk(_ batch: [JournalRecord]) {
        guard var disk = onDisk, let last = batch.last else { return }
        disk.first = last.sequence + 1
        disk.count = max(0, disk.count - batch.count)
        disk.oldestAt = last.visit.at
        onDisk = disk.first > disk.last ? nil : disk
        startFlight(batch)
    }

    /// The batch in flight is committed (or given up at a stop).
    mutating func finished() {
        inFlight = 0
        inFlightOldestAt = nil
    }

    private mutating func startFlight(_ batch: [JournalRecord]) {
        inFlight = batch.count
        inFlightOldestAt = batch.first?.visit.at
    }
}
