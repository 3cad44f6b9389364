import Foundation
import Testing

/// Every Swift sample of the README, of `docs/` and of the DocC catalogs is code the suites compile: the sample
/// (without its `import` lines) is a marked region of a test file, from a line `// <page>:` to
/// a line `// End of the example.`, dedented; or it is a whole file, imports included. A
/// sample's imports must be in the region's file. A block that cannot compile on its own (a
/// manifest fragment) says so on the line before it: `<!-- not compiled: why -->`.
@Suite("Documentation samples")
struct DocSampleTests {
    /// A Swift block of a page.
    struct Block: CustomStringConvertible {
        let page: String
        let line: Int
        let imports: [String]
        let code: String
        var description: String { "\(page):\(line)" }
    }

    /// A compiled region of a test file.
    struct Region {
        let file: String
        let page: String
        let code: String
        let fileImports: Set<String>
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("every Swift block of the README, the docs and the DocC catalogs is compiled by a suite, as shown")
    func samplesCompile() throws {
        let manager = FileManager.default
        let docs = try manager.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        // The DocC catalogs' pages: Sources/<product>/<product>.docc/*.md.
        let products = try manager.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path).sorted()
        let catalogs = products.flatMap { product in
            let catalog = "Sources/\(product)/\(product).docc"
            let pages = (try? manager.contentsOfDirectory(atPath: Self.root.appendingPathComponent(catalog).path)) ?? []
            return pages.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
        }
        let pages = ["README.md"] + docs + catalogs
        let blocks = try pages.flatMap { try Self.blocks(of: $0) }
        #expect(blocks.count >= 15, "the pages' samples were not found: \(blocks.count)")
        let (regions, files) = try Self.compiled()
        var unmatched: [String] = []
        for block in blocks {
            let wholeFile =
                files[block.imports.map { "import \($0)" }.joined(separator: "\n") + "\n\n" + block.code + "\n"] != nil
                || files[block.code + "\n"] != nil
            let region = regions.first { $0.page == block.page && $0.code == block.code }
            if let region {
                let missing = block.imports.filter { !region.fileImports.contains($0) }
                if !missing.isEmpty { unmatched.append("\(block): \(region.file) does not import \(missing.joined(separator: ", "))") }
            } else if !wholeFile {
                unmatched.append("\(block): no test file has it (a region `// \(block.page):` … `// End of the example.`):\n\(block.code)")
            }
        }
        #expect(unmatched.isEmpty, "\(unmatched.joined(separator: "\n\n"))")
        let orphans = regions.filter { region in !blocks.contains { $0.page == region.page && $0.code == region.code } }
        #expect(orphans.isEmpty, "regions no page shows: \(orphans.map { "\($0.file) (\($0.page))" })")
    }

    /// The Swift blocks of `page`, dedented, with their leading imports apart.
    static func blocks(of page: String) throws -> [Block] {
        let lines = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            guard trimmed == "```swift" else {
                index += 1
                continue
            }
            let exempt = index > 0 && lines[index - 1].trimmingCharacters(in: .whitespaces).hasPrefix("<!-- not compiled:")
            let indent = lines[index].prefix { $0 == " " }.count
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(String(lines[index].dropFirst(min(indent, lines[index].prefix { $0 == " " }.count))))
                index += 1
            }
            if !exempt {
                var imports: [String] = []
                while let first = body.first, first.hasPrefix("import ") || (first.isEmpty && !imports.isEmpty) {
                    if first.hasPrefix("import ") { imports.append(String(first.dropFirst("import ".count))) }
                    body.removeFirst()
                }
                blocks.append(Block(page: page, line: index - body.count, imports: imports, code: body.joined(separator: "\n")))
            }
            index += 1
        }
        return blocks
    }

    /// The marked regions of every test file (the library's and Nightride's), and every test
    /// file's whole text.
    static func compiled() throws -> (regions: [Region], files: [String: String]) {
        var regions: [Region] = []
        var files: [String: String] = [:]
        for folder in ["Tests", "Nightride/Tests"] {
            let base = root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                files[text] = url.path
                let lines = text.components(separatedBy: "\n")
                let imports = Set(
                    lines.filter { $0.hasPrefix("import ") || $0.hasPrefix("@testable import ") }.map { $0.components(separatedBy: "import ").last! })
                var index = 0
                while index < lines.count {
                    let marker = lines[index].trimmingCharacters(in: .whitespaces)
                    guard marker.hasPrefix("// "), marker.hasSuffix(".md:"), !marker.contains(" ", after: 3) else {
                        index += 1
                        continue
                    }
                    let page = String(marker.dropFirst(3).dropLast())
                    var body: [String] = []
                    index += 1
                    while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "// End of the example." {
                        body.append(lines[index])
                        index += 1
                    }
                    let indent = body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                    let code = body.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(separator: "\n")
                    regions.append(Region(file: url.path, page: page, code: code, fileImports: imports))
                    index += 1
                }
            }
        }
        return (regions, files)
    }
}

extension String {
    /// Whether `character` occurs after the first `offset` characters.
    fileprivate func contains(_ character: Character, after offset: Int) -> Bool {
        dropFirst(offset).contains(character)
    }
}
