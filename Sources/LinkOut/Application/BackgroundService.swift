/// A service that works on a thread of its own (a `PeriodicWorker`) while the server runs: reporting, payment
/// events, entitlement webhooks, notifications, the monthly close's watch, the retention pass. The application
/// starts them in one list and stops them in the reverse order (`Application.start`, `Application.shutdown`).
protocol BackgroundService: Sendable {
    /// Starts the thread; its first pass runs at once. Called at most once.
    func start()
    /// Stops after the pass in flight and waits for it. Safe to call more than once, or without `start`.
    func stop()
}
