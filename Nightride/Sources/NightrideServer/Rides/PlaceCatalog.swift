import Foundation
import NightrideModel

/// The fixed list of destinations behind `GET /places`.
///
/// Search ignores case and accents and matches anywhere in the name or the area, so a
/// search-as-you-type client gets results from the first letters.
public struct PlaceCatalog: Sendable {
    /// Every place, in the order results are returned.
    public let places: [Place]
    /// Each place's name and area folded once, in the order of `places`.
    private let folded: [(name: String, area: String)]

    /// A catalog of `places`; the default is a set of Paris destinations.
    public init(places: [Place] = PlaceCatalog.paris) {
        self.places = places
        folded = places.map { (Self.fold($0.name), Self.fold($0.area)) }
    }

    /// Up to `limit` places whose name or area contains `query`; none for a blank query.
    public func search(_ query: String, limit: Int = 10) -> [Place] {
        let needle = Self.fold(query.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !needle.isEmpty else { return [] }
        return Array(
            zip(places, folded).lazy
                .filter { $1.name.contains(needle) || $1.area.contains(needle) }
                .map(\.0)
                .prefix(limit)
        )
    }

    /// The place with `id`, if any.
    public func place(id: String) -> Place? {
        places.first { $0.id == id }
    }

    private static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// Thirty destinations around Paris, where night rides start and end.
    public static let paris: [Place] = [
        ("Gare du Nord", "Paris 10e"), ("Gare de l'Est", "Paris 10e"), ("Gare de Lyon", "Paris 12e"),
        ("Gare Saint-Lazare", "Paris 8e"), ("Gare Montparnasse", "Paris 15e"), ("Bastille", "Paris 11e"),
        ("République", "Paris 3e"), ("Oberkampf", "Paris 11e"), ("Pigalle", "Paris 9e"),
        ("Montmartre", "Paris 18e"), ("Belleville", "Paris 20e"), ("Canal Saint-Martin", "Paris 10e"),
        ("Châtelet", "Paris 1er"), ("Opéra", "Paris 9e"), ("Champs-Élysées", "Paris 8e"),
        ("Trocadéro", "Paris 16e"), ("Tour Eiffel", "Paris 7e"), ("Saint-Germain-des-Prés", "Paris 6e"),
        ("Quartier Latin", "Paris 5e"), ("Le Marais", "Paris 4e"), ("Nation", "Paris 12e"),
        ("Place d'Italie", "Paris 13e"), ("Bercy", "Paris 12e"), ("La Villette", "Paris 19e"),
        ("Batignolles", "Paris 17e"), ("La Défense", "Puteaux"), ("Saint-Denis", "Seine-Saint-Denis"),
        ("Montreuil", "Seine-Saint-Denis"), ("Vincennes", "Val-de-Marne"), ("Aéroport Charles-de-Gaulle", "Roissy"),
    ].map { Place(id: slug($0.0), name: $0.0, area: $0.1) }

    private static func slug(_ name: String) -> String {
        fold(name).split { !$0.isLetter && !$0.isNumber }.joined(separator: "-")
    }
}
