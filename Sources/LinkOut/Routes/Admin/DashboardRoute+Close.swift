import Domain

/// The dashboard's monthly close panel: the months whose deadline is near or past, from the close pass's last
/// look (no ledger read on a page load), each with its state and the time left before its deadline.
extension DashboardRoute {
    func addClose(to context: inout Template.Context, now: Int64) {
        context["close_deadline_day"] = .text(String(configuration.close.deadlineDay))
        guard let snapshot = close?.snapshot else {
            context["has_close"] = .flag(false)
            return
        }
        let current = CloseMonth(containing: now)
        let deadline = current.deadline(day: configuration.close.deadlineDay)
        let open: Template.Context = [
            "month": .text(current.description), "state": .text(CloseReport.State.open.rawValue),
            "state_class": .text("muted"), "outstanding": .text("–"),
            "deadline": .text(DashboardTime.timestamp(deadline)),
            "left": .text(CloseReport.timeLeft((deadline - now) / 1000)),
        ]
        let rows = snapshot.months.reversed().map { watch -> Template.Context in
            [
                "month": .text(watch.month.description),
                "state": .text(watch.state.rawValue),
                "state_class": .text(Self.closeClass(watch, now: now)),
                "outstanding": .text(String(watch.outstanding)),
                "deadline": .text(DashboardTime.timestamp(watch.deadline)),
                "left": .text(watch.state == .closed ? "–" : CloseReport.timeLeft((watch.deadline - now) / 1000)),
            ]
        }
        context["has_close"] = .flag(true)
        context["close_rows"] = .list([open] + rows)
    }

    /// Red when late, amber in the warning window, green when closed.
    static func closeClass(_ watch: CloseMonitor.Watch, now: Int64) -> String {
        switch watch.state {
        case .closed: "ok"
        case .late: "late"
        case .open, .closing: CloseMonitor.isWarning(watch, now: now) ? "warn" : "muted"
        }
    }
}
