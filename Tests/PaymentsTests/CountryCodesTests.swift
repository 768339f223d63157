import Domain
import Testing

@testable import Payments

@Suite("CountryCodes")
struct CountryCodesTests {
    @Test func theWholeISOTableIsEmbedded() {
        #expect(CountryCodes.alpha3ByAlpha2.count == 249)
        #expect(CountryCodes.alpha3Codes.count == 249)
        #expect(CountryCodes.alpha2ByAlpha3.count == 249)
    }

    @Test func mapsAlpha2ToAlpha3() {
        #expect(CountryCodes.alpha3(forAlpha2: "DE") == "DEU")
        #expect(CountryCodes.alpha3(forAlpha2: "US") == "USA")
        #expect(CountryCodes.alpha3(forAlpha2: "es") == "ESP")
        #expect(CountryCodes.alpha3(forAlpha2: "GB") == "GBR")
        #expect(CountryCodes.alpha2(forAlpha3: "DEU") == "DE")
    }

    @Test func unknownCodesAreNil() {
        #expect(CountryCodes.alpha3(forAlpha2: "XK") == nil)
        #expect(CountryCodes.alpha3(forAlpha2: "ZZ") == nil)
        #expect(CountryCodes.alpha3(forAlpha2: "") == nil)
        #expect(CountryCodes.alpha2(forAlpha3: "XXX") == nil)
    }

    @Test func theAlpha3SetIsWhatTaxCountryMayHold() {
        #expect(CountryCodes.isAlpha3("ESP"))
        #expect(!CountryCodes.isAlpha3("esp"))
        #expect(!CountryCodes.isAlpha3("EU"))
    }
}
