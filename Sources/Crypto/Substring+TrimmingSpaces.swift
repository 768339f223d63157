extension Substring {
    /// Without the spaces around it: webhook signature headers (`t=…, v1=…`, `ts=…; h1=…`) may have them after a
    /// separator.
    func trimmingSpaces() -> Substring {
        var result = self
        while result.first == " " { result.removeFirst() }
        while result.last == " " { result.removeLast() }
        return result
    }
}
