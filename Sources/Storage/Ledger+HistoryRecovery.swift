/// Notification history recovery, resumable: where each app and environment got to in a window.
extension Ledger {
    /// Every recorded window's progress, oldest window first.
    public func historyCheckpoints() throws(StorageError) -> [HistoryCheckpoint] {
        try engine.historyCheckpoints()
    }

    /// Records how far one app and environment got (insert or replace). Returns once committed.
    public func saveHistoryCheckpoint(_ checkpoint: HistoryCheckpoint) throws(StorageError) {
        try engine.saveHistoryCheckpoint(checkpoint)
    }

    /// Forgets a finished window.
    public func clearHistoryWindow(startDate: Int64, endDate: Int64) throws(StorageError) {
        try engine.clearHistoryWindow(startDate: startDate, endDate: endDate)
    }
}
