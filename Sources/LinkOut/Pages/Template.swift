import Foundation

/// A page template from `Public/templates/`, in a small subset of Mustache:
/// `{{name}}` inserts a value, HTML-escaped (there is no unescaped form, so no value can inject markup);
/// `{{#name}}…{{/name}}` repeats for each item of a list, or renders once for `true` or non-empty text;
/// `{{^name}}…{{/name}}` renders when the value is missing, false, empty text or an empty list.
/// At load, `{{> file}}` is replaced by `partials/file` from the templates folder (the parts pages share).
struct Template: Sendable {
    /// A value a template can show.
    indirect enum Value: Sendable {
        case text(String)
        case flag(Bool)
        case list([[String: Value]])
    }

    typealias Context = [String: Value]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private indirect enum Node: Sendable {
        case literal([UInt8])
        case variable(String)
        case section(String, inverted: Bool, [Node])
    }

    private let nodes: [Node]

    init(_ text: String) throws(Failure) {
        var index = text.startIndex
        nodes = try Self.parse(text, &index, closing: nil)
    }

    /// Loads `name` from `directory`; a missing or malformed template stops start-up with its path.
    static func load(_ name: String, from directory: String) throws(Failure) -> Template {
        let path = (directory as NSString).appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "template \(path) not found")
        }
        do {
            return try Template(try includingPartials(String(decoding: data, as: UTF8.self), from: directory))
        } catch {
            throw Failure(description: "template \(path): \(error.description)")
        }
    }

    /// `text` with each `{{> file}}` replaced by `partials/file` (one level: a partial includes nothing). The
    /// partial's final newline is dropped, so the include's own line ending stays the only one.
    private static func includingPartials(_ text: String, from directory: String) throws(Failure) -> String {
        var output = ""
        var rest = Substring(text)
        while let open = rest.range(of: "{{>") {
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw Failure(description: "unclosed {{>")
            }
            output += rest[..<open.lowerBound]
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            let path = (directory as NSString).appendingPathComponent("partials/" + name)
            guard !name.contains("/"), let data = FileManager.default.contents(atPath: path) else {
                throw Failure(description: "partial \(path) not found")
            }
            var partial = String(decoding: data, as: UTF8.self)
            if partial.hasSuffix("\n") { partial.removeLast() }
            output += partial
            rest = rest[close.upperBound...]
        }
        return output + rest
    }

    func render(_ context: Context) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(8 * 1024)
        Self.render(nodes, [context], into: &output)
        return output
    }

    private static func parse(_ text: String, _ index: inout String.Index, closing: String?) throws(Failure) -> [Node] {
        var nodes: [Node] = []
        while index < text.endIndex {
            guard let open = text.range(of: "{{", range: index..<text.endIndex) else {
                nodes.append(.literal(Array(text[index...].utf8)))
                index = text.endIndex
                break
            }
            if open.lowerBound > index { nodes.append(.literal(Array(text[index..<open.lowerBound].utf8))) }
            guard let close = text.range(of: "}}", range: open.upperBound..<text.endIndex) else {
                throw Failure(description: "unclosed {{")
            }
            let tag = text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            index = close.upperBound
            guard let first = tag.first else { throw Failure(description: "empty tag") }
            let name = String(tag.dropFirst()).trimmingCharacters(in: .whitespaces)
            switch first {
            case "#", "^":
                let children = try parse(text, &index, closing: name)
                nodes.append(.section(name, inverted: first == "^", children))
            case "/":
                guard name == closing else { throw Failure(description: "unexpected {{/\(name)}}") }
                return nodes
            case "!":
                continue
            default:
                guard tag.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }) else {
                    throw Failure(description: "unsupported tag {{\(tag)}}")
                }
                nodes.append(.variable(tag))
            }
        }
        if let closing { throw Failure(description: "missing {{/\(closing)}}") }
        return nodes
    }

    private static func lookup(_ name: String, _ stack: [Context]) -> Value? {
        for context in stack.reversed() {
            if let value = context[name] { return value }
        }
        return nil
    }

    private static func render(_ nodes: [Node], _ stack: [Context], into output: inout [UInt8]) {
        for node in nodes {
            switch node {
            case .literal(let bytes):
                output.append(contentsOf: bytes)
            case .variable(let name):
                if case .text(let text) = lookup(name, stack) { appendEscaped(text, to: &output) }
            case .section(let name, let inverted, let children):
                let value = lookup(name, stack)
                let items: [Context]
                switch value {
                case .list(let list): items = list
                case .flag(true): items = [[:]]
                case .text(let text) where !text.isEmpty: items = [[:]]
                default: items = []
                }
                if inverted {
                    if items.isEmpty { render(children, stack, into: &output) }
                } else {
                    for item in items { render(children, stack + [item], into: &output) }
                }
            }
        }
    }

    /// Escapes the five characters that matter in HTML text and attribute values.
    static func appendEscaped(_ text: String, to output: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: Array("&amp;".utf8))
            case UInt8(ascii: "<"): output.append(contentsOf: Array("&lt;".utf8))
            case UInt8(ascii: ">"): output.append(contentsOf: Array("&gt;".utf8))
            case UInt8(ascii: "\""): output.append(contentsOf: Array("&quot;".utf8))
            case UInt8(ascii: "'"): output.append(contentsOf: Array("&#39;".utf8))
            default: output.append(byte)
            }
        }
    }
}
