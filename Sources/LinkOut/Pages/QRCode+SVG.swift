extension QRCode {
    /// Light modules around the symbol on every side: ISO/IEC 18004:2015 §6.3.8 asks for four module widths, and
    /// a reader needs them to find the finder patterns against the page.
    static let quietZone = 4

    /// The symbol as an inline SVG image: user units are modules (quiet zone included), so `viewBox` is
    /// `size + 8` on each side and the browser scales it sharply to `pixelsPerModule` pixels a module (or to
    /// whatever size CSS gives it). `label` names the image for screen readers, in `aria-label` and `<title>`.
    ///
    /// The colours are fixed, black on a white square, never `currentColor`: under a dark theme the text colour
    /// turns light, and phone cameras read light-on-dark symbols poorly or not at all, so the code must stay dark on
    /// white whatever the page around it does.
    func svg(label: String, pixelsPerModule: Int = 4) -> String {
        let extent = size + 2 * Self.quietZone
        let pixels = extent * max(1, pixelsPerModule)
        var escaped: [UInt8] = []
        Template.appendEscaped(label, to: &escaped)
        let title = String(decoding: escaped, as: UTF8.self)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(extent) \(extent)\""
        svg += " width=\"\(pixels)\" height=\"\(pixels)\" shape-rendering=\"crispEdges\""
        svg += " role=\"img\" aria-label=\"\(title)\"><title>\(title)</title>"
        svg += "<rect width=\"\(extent)\" height=\"\(extent)\" fill=\"#fff\"/>"
        svg += "<path fill=\"#000\" d=\"\(pathData)\"/></svg>"
        return svg
    }

    /// One rectangle per horizontal run of dark modules, row by row, so a symbol of a few thousand dark modules
    /// takes a few hundred short path commands: `M x y` to the run's top-left corner, `h length`, `v1`,
    /// `h -length`, `z`.
    var pathData: String {
        var commands: [String] = []
        for (row, modules) in modules.enumerated() {
            var column = 0
            while column < size {
                guard modules[column] else {
                    column += 1
                    continue
                }
                let start = column
                while column < size && modules[column] { column += 1 }
                let length = column - start
                commands.append("M\(start + Self.quietZone) \(row + Self.quietZone)h\(length)v1h-\(length)z")
            }
        }
        return commands.joined()
    }
}
