/// Who is told about visits once they are in the tables (the metrics' visit and new-token counts), in a box of its
/// own: a closure kept directly in a Mutex is re-wrapped in a conversion thunk on every `withLock` that touches
/// it, so each call would grow a chain of thunks (and its cost) without end.
final class IngestionObserver: Sendable {
    let call: @Sendable ([Visit], [RecordOutcome]) -> Void
    init(call: @escaping @Sendable ([Visit], [RecordOutcome]) -> Void) { self.call = call }
}
