// MARK: - The module matrix (ISO/IEC 18004:2015 §6.3, §7.7, §7.8)

extension QRCode {
    /// The data mask condition of Table 10 (§7.8.2), i the row and j the column: where it holds, a module of the
    /// encoding region is inverted.
    static func maskInverts(_ mask: Int, row i: Int, column j: Int) -> Bool {
        switch mask {
        case 0: (i + j) % 2 == 0
        case 1: i % 2 == 0
        case 2: j % 3 == 0
        case 3: (i + j) % 3 == 0
        case 4: (i / 2 + j / 3) % 2 == 0
        case 5: (i * j) % 2 + (i * j) % 3 == 0
        case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }

    /// The penalty of §7.8.3.1, Table 11, for a square matrix stored row after row (`true` dark):
    /// N1 = 3 plus 1 per module beyond five for each run of five or more modules of one colour in a row or column;
    /// N2 = 3 for each 2 × 2 block of one colour (a larger block counts as the 2 × 2 blocks it covers);
    /// N3 = 40 for each dark-light-dark-dark-dark-light-dark run in a row or column with four light modules on at
    /// least one side (beyond the edge counts as light: the quiet zone);
    /// N4 = 10 for each full 5 % the dark proportion lies away from 50 %.
    static func penalty(_ dark: [Bool], size: Int) -> Int {
        var score = 0
        var line = [Bool](repeating: false, count: size)
        for index in 0..<size {
            for position in 0..<size { line[position] = dark[index * size + position] }
            score += linePenalty(line)
            for position in 0..<size { line[position] = dark[position * size + index] }
            score += linePenalty(line)
        }
        for row in 0..<(size - 1) {
            for column in 0..<(size - 1) {
                let colour = dark[row * size + column]
                if dark[row * size + column + 1] == colour && dark[(row + 1) * size + column] == colour
                    && dark[(row + 1) * size + column + 1] == colour
                {
                    score += 3
                }
            }
        }
        let darkCount = dark.reduce(0) { $0 + ($1 ? 1 : 0) }
        let total = size * size
        score += 10 * (abs(20 * darkCount - 10 * total) / total)
        return score
    }

    /// N1 and N3 of one row or column.
    static func linePenalty(_ line: [Bool]) -> Int {
        var score = 0
        var run = 1
        for position in 1..<line.count {
            if line[position] == line[position - 1] {
                run += 1
            } else {
                if run >= 5 { score += run - 2 }
                run = 1
            }
        }
        if run >= 5 { score += run - 2 }

        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        guard line.count >= 7 else { return score }
        for start in 0...(line.count - 7) where line[start..<(start + 7)].elementsEqual(finderLike) {
            let lightBefore = (start - 4..<start).allSatisfy { $0 < 0 || !line[$0] }
            let lightAfter = (start + 7..<start + 11).allSatisfy { $0 >= line.count || !line[$0] }
            if lightBefore || lightAfter { score += 40 }
        }
        return score
    }
}
