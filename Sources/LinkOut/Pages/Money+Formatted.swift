extension Money {
    /// The amount as a person reads it in `language`: `€29.99` in English, `29,99 €` in German, `¥480` in Japanese.
    package func formatted(language: String) -> String {
        LocaleFormats.shared.price(self, language: language)
    }
}
