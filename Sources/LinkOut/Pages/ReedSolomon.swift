/// Reed–Solomon error correction over GF(2⁸) with the prime polynomial x⁸ + x⁴ + x³ + x² + 1 (ISO/IEC 18004:2015
/// §7.5.2).
enum ReedSolomon {
    /// `exponentials[i]` is αⁱ for i in 0..<255.
    static let exponentials: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 255)
        var value = 1
        for index in 0..<255 {
            table[index] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return table
    }()

    /// `logarithms[x]` is i such that αⁱ = x, for x ≠ 0.
    static let logarithms: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for (exponent, value) in exponentials.enumerated() { table[Int(value)] = exponent }
        return table
    }()

    static func multiply(_ left: UInt8, _ right: UInt8) -> UInt8 {
        if left == 0 || right == 0 { return 0 }
        return exponentials[(logarithms[Int(left)] + logarithms[Int(right)]) % 255]
    }

    /// The generator polynomial (x − α⁰)(x − α¹)…(x − α^(degree−1)) of Annex A, coefficients from the highest
    /// power down, the leading 1 included.
    static func generator(degree: Int) -> [UInt8] {
        var polynomial: [UInt8] = [1]
        for exponent in 0..<degree {
            let root = exponentials[exponent]
            var product = [UInt8](repeating: 0, count: polynomial.count + 1)
            for (index, coefficient) in polynomial.enumerated() {
                product[index] ^= coefficient
                product[index + 1] ^= multiply(coefficient, root)
            }
            polynomial = product
        }
        return polynomial
    }

    /// The error correction codewords: the remainder of the data polynomial times x^degree divided by the
    /// generator (§7.5.2).
    static func remainder(of data: ArraySlice<UInt8>, generator: [UInt8]) -> [UInt8] {
        let degree = generator.count - 1
        var remainder = [UInt8](repeating: 0, count: degree)
        guard degree > 0 else { return remainder }
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for index in 0..<degree { remainder[index] ^= multiply(generator[index + 1], factor) }
        }
        return remainder
    }
}
