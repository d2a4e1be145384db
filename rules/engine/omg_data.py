"""The OMG System's tables as plain data: aptitudes, tiers, weapons, armor, disciplines.

Everything here is immutable and ready to build form choices from, e.g.
``[(c.numeral, c.label) for c in WEAPON_CATEGORIES]``. Names are the seed's facts; the short
descriptions are ours.

>>> [a.abbr for a in APTITUDES]
['FOC', 'SPD', 'SKL', 'VGR', 'NRV', 'CHR', 'SVY']
>>> WEAPONS_BY_NAME["Long Sword"].dmg, ARMORS_BY_NAME["Plate mail"].arm
(4, 5)
>>> ARCHETYPES_BY_KEY["warrior"].disciplines[4]
'Melee Combat'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rules.engine.errors import InvalidChoice

__all__ = [
    "APTITUDES",
    "APTITUDE_ABBRS",
    "APTITUDE_CHOICES",
    "ARCHETYPES",
    "ARCHETYPES_BY_KEY",
    "ARCHETYPE_CHOICES",
    "ARMORS",
    "ARMORS_BY_NAME",
    "COMPOSITES",
    "DEFAULT_ZONES",
    "DIFFICULTY_CATEGORIES",
    "MELEE_COMBAT",
    "PROFICIENCY_TIERS",
    "SECONDARY_LISTS",
    "WEAPONS",
    "WEAPONS_BY_NAME",
    "WEAPON_CATEGORIES",
    "WEAPON_CATEGORIES_BY_NUMERAL",
    "WEAPON_CATEGORY_CHOICES",
    "WEAPON_DISCIPLINES",
    "WEIGHT_CATEGORIES",
    "Aptitude",
    "Archetype",
    "ArmorSpec",
    "Composite",
    "DifficultyCategory",
    "ProficiencyTier",
    "WeaponCategory",
    "WeaponSpec",
    "WeightCategory",
    "weapon_discipline",
]


@dataclass(frozen=True, slots=True)
class Aptitude:
    """One of the seven core aptitudes (rated 1..5)."""

    abbr: str
    name: str


APTITUDES: tuple[Aptitude, ...] = (
    Aptitude("FOC", "Focus"),
    Aptitude("SPD", "Speed"),
    Aptitude("SKL", "Skill"),
    Aptitude("VGR", "Vigor"),
    Aptitude("NRV", "Nerve"),
    Aptitude("CHR", "Charm"),
    Aptitude("SVY", "Savvy"),
)
APTITUDE_ABBRS: tuple[str, ...] = tuple(a.abbr for a in APTITUDES)
APTITUDE_CHOICES: tuple[tuple[str, str], ...] = tuple((a.abbr, a.name) for a in APTITUDES)


@dataclass(frozen=True, slots=True)
class Composite:
    """A composite attribute: the sum of two aptitudes (2..10)."""

    abbr: str
    name: str
    parts: tuple[str, str]


COMPOSITES: tuple[Composite, ...] = (
    Composite("AGL", "Agility", ("SPD", "SKL")),
    Composite("STR", "Strength", ("SKL", "VGR")),
    Composite("STM", "Stamina", ("NRV", "VGR")),
    Composite("SPR", "Spirit", ("NRV", "CHR")),
    Composite("INS", "Insight", ("CHR", "SVY")),
    Composite("WIT", "Wit", ("SVY", "SPD")),
)


@dataclass(frozen=True, slots=True)
class ProficiencyTier:
    """A named proficiency level and the PRO it starts at."""

    name: str
    pro: int


PROFICIENCY_TIERS: tuple[ProficiencyTier, ...] = (
    ProficiencyTier("Inept", 55),
    ProficiencyTier("Capable", 60),
    ProficiencyTier("Adept", 70),
    ProficiencyTier("Expert", 90),
    ProficiencyTier("Master", 100),
)


@dataclass(frozen=True, slots=True)
class DifficultyCategory:
    """A difficulty category the GM can name instead of a number."""

    abbr: str
    name: str
    dif: int


DIFFICULTY_CATEGORIES: tuple[DifficultyCategory, ...] = (
    DifficultyCategory("CAS", "Casual", 10),
    DifficultyCategory("MOD", "Moderate", 20),
    DifficultyCategory("AMB", "Ambitious", 30),
    DifficultyCategory("FOR", "Formidable", 40),
    DifficultyCategory("SUP", "Supreme", 50),
)


@dataclass(frozen=True, slots=True)
class WeaponCategory:
    """One of the nine weapon specialization categories (a weapon discipline each)."""

    number: int
    numeral: str
    name: str

    @property
    def label(self) -> str:
        """``"II. single edged sword"``."""
        return f"{self.numeral}. {self.name}"

    @property
    def discipline(self) -> str:
        """The discipline name used on sheets for this category."""
        return weapon_discipline(self.numeral)


WEAPON_CATEGORIES: tuple[WeaponCategory, ...] = (
    WeaponCategory(1, "I", "knife or dagger"),
    WeaponCategory(2, "II", "single edged sword"),
    WeaponCategory(3, "III", "dual edged sword"),
    WeaponCategory(4, "IV", "axe or hatchet"),
    WeaponCategory(5, "V", "hammer or mace"),
    WeaponCategory(6, "VI", "spear or polearm"),
    WeaponCategory(7, "VII", "two handed sword, axe, hammer, mace"),
    WeaponCategory(8, "VIII", "flail"),
    WeaponCategory(9, "IX", "whip"),
)
WEAPON_CATEGORIES_BY_NUMERAL: Mapping[str, WeaponCategory] = MappingProxyType(
    {c.numeral: c for c in WEAPON_CATEGORIES}
)
WEAPON_CATEGORY_CHOICES: tuple[tuple[str, str], ...] = tuple(
    (c.numeral, c.label) for c in WEAPON_CATEGORIES
)


def weapon_discipline(numeral: str) -> str:
    """Discipline name for a weapon category: ``weapon_discipline("II")`` is
    ``"Weapon Mastery II (single edged sword)"``; any other numeral raises
    :class:`~rules.engine.errors.InvalidChoice`."""
    category = WEAPON_CATEGORIES_BY_NUMERAL.get(numeral) if isinstance(numeral, str) else None
    if category is None:
        allowed = ", ".join(WEAPON_CATEGORIES_BY_NUMERAL)
        raise InvalidChoice(f"weapon category must be one of {allowed}, got {numeral!r}")
    return f"Weapon Mastery {category.numeral} ({category.name})"


WEAPON_DISCIPLINES: tuple[str, ...] = tuple(weapon_discipline(c.numeral) for c in WEAPON_CATEGORIES)


@dataclass(frozen=True, slots=True)
class WeaponSpec:
    """A weapon from the table: DMG 1..5 and its category numeral (``None`` for missiles,
    which the archery / thrown disciplines cover instead; docs/rules.md, "Tables")."""

    name: str
    dmg: int
    category: str | None


WEAPONS: tuple[WeaponSpec, ...] = (
    WeaponSpec("Knife", 1, "I"),
    WeaponSpec("Dagger or Bowie", 2, "I"),
    WeaponSpec("Short Sword", 3, "III"),
    WeaponSpec("Long Sword", 4, "III"),
    WeaponSpec("Sabre or Katana", 4, "II"),
    WeaponSpec("Great Sword", 5, "VII"),
    WeaponSpec("Hatchet", 4, "IV"),
    WeaponSpec("Battle Axe", 5, "IV"),
    WeaponSpec("Mace", 4, "V"),
    WeaponSpec("Flail", 5, "VIII"),
    WeaponSpec("Two hand Mace", 5, "VII"),
    WeaponSpec("Hammer", 4, "V"),
    WeaponSpec("War Hammer", 5, "V"),
    WeaponSpec("Staff", 1, "VI"),
    WeaponSpec("Spear", 3, "VI"),
    WeaponSpec("Halberd", 4, "VI"),
    WeaponSpec("Sling", 1, None),
    WeaponSpec("Blowgun", 1, None),
    WeaponSpec("Shuriken", 1, None),
    WeaponSpec("Arrow", 3, None),
    WeaponSpec("Whip", 1, "IX"),
)
WEAPONS_BY_NAME: Mapping[str, WeaponSpec] = MappingProxyType({w.name: w for w in WEAPONS})


@dataclass(frozen=True, slots=True)
class ArmorSpec:
    """An armor type from the table: ARM 1..5 per body zone it covers."""

    name: str
    arm: int


ARMORS: tuple[ArmorSpec, ...] = (
    ArmorSpec("Padded", 1),
    ArmorSpec("Leather", 2),
    ArmorSpec("Boiled Leather", 3),
    ArmorSpec("Studded Leather", 3),
    ArmorSpec("Ring mail", 4),
    ArmorSpec("Scale mail", 4),
    ArmorSpec("Chain mail", 4),
    ArmorSpec("Plate mail", 5),
)
ARMORS_BY_NAME: Mapping[str, ArmorSpec] = MappingProxyType({a.name: a for a in ARMORS})

MELEE_COMBAT = "Melee Combat"


@dataclass(frozen=True, slots=True)
class Archetype:
    """A creation archetype: rank 1 in each of its seven ``disciplines``.

    ``signature`` is the archetype's headline art; it belongs to the archetype's list (so it
    costs 1 point for that archetype) but is not one of the seven free ranks. ``disciplines``
    holds the seven free ones; for the Warrior the seventh is a weapon discipline of the
    player's choice (see :data:`WEAPON_DISCIPLINES`).
    """

    key: str
    name: str
    field: str
    signature: str
    disciplines: tuple[str, ...]

    @property
    def pool(self) -> frozenset[str]:
        """Every discipline that costs this archetype's own price (1 point a rank)."""
        extra = WEAPON_DISCIPLINES if self.key == "warrior" else ()
        return frozenset((self.signature, *self.disciplines, *extra))


WEAPON_MASTERY = "Weapon Mastery"

ARCHETYPES: tuple[Archetype, ...] = (
    Archetype(
        "ranger",
        "Ranger",
        "Outdoorsmanship",
        "Bushcraft",
        (
            "Archery",
            "Camouflage/Concealment",
            "Fishing/Trapping",
            "Foraging",
            "Hunting/Tracking",
            "Mapping/Navigation",
            "Scouting/Recon",
        ),
    ),
    Archetype(
        "warrior",
        "Warrior",
        "Warfare",
        "Warcraft",
        (
            "Battle Tactics",
            "Demolitions & Munitions",
            "First Aid & Field Medicine",
            "Interrogation & Torture",
            MELEE_COMBAT,
            "Street Fighting & Brawling",
            WEAPON_MASTERY,
        ),
    ),
    Archetype(
        "monk",
        "Monk",
        "Warrior Mystic",
        "Kung Fu",
        (
            "Art",
            "Agriculture & Farming",
            "Brewing, Distilling & Wine Making",
            "Gymnastics & Acrobatics",
            "Hypnosis & Meditation",
            "Religious Lore - Theology & Prophecy",
            "Scribe - read/write",
        ),
    ),
    Archetype(
        "rogue",
        "Rogue",
        "Skulduggery",
        "Heist Planning",
        (
            "Disguise/Fast Talk",
            "Evasion/Shadowing",
            "Forgery",
            "Gambling",
            "Lock-picking",
            "Pickpocket/Sleight of Hand",
            "Prowling",
        ),
    ),
    Archetype(
        "wizard",
        "Wizard",
        "Academic Studies",
        "Spellcraft",
        (
            "Accounting & Mathematics",
            "Aethyric Sense",
            "Alchemy & Herbalism/Botany",
            "Arcanum & Science",
            "Engineering & Mechanics",
            "Investigation & Research",
            "Surgery & Anatomy",
        ),
    ),
    Archetype(
        "bard",
        "Bard",
        "Performance Arts",
        "Captivate Audience",
        (
            "Acting & Oration",
            "Conversation - Gift of Gab",
            "Dancing",
            "Jesting",
            "Musical Instrument",
            "Singing & Songcraft",
            "Storytelling & Puppetry",
        ),
    ),
)
ARCHETYPES_BY_KEY: Mapping[str, Archetype] = MappingProxyType({a.key: a for a in ARCHETYPES})
ARCHETYPE_CHOICES: tuple[tuple[str, str], ...] = tuple((a.key, a.name) for a in ARCHETYPES)

SECONDARY_LISTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "Scholarly Lore": (
            "Accounting & Mathematics",
            "Architecture",
            "Cartography",
            "Culture Lore",
            "Economic Lore & Appraisal",
            "Language",
            "Political Lore",
            "Religious Lore - Theology & Prophecy",
            "Scribe - read/write",
            "Zoological & Botanical Lore",
        ),
        "Tradeskills": (
            "Agriculture & Farming",
            "Animal Handling, Training & Herding",
            "Butchering",
            "Carpentry & Logging",
            "Cooking & Baking",
            "Masonry",
            "Mining & Prospecting",
            "Rat Catching",
            "Seamanship",
            "Weaving & Textiles",
        ),
        "Craftsmanship": (
            "Blacksmithing, Armorer & Arms Making",
            "Brewing, Distilling & Wine Making",
            "Cartwright & Coach Building",
            "Cobbler",
            "Fletcher & Bowmaker",
            "Jeweler",
            "Saddlemaking",
            "Ship Building",
            "Tailor",
            "Taxidermy",
        ),
        "Athletics": (
            "Boating, Canoeing & Kayaking",
            "Body-building, Strength/Endurance Training",
            "Cart, Coach Driving & Team Driving",
            "Climbing & Rappelling",
            "Gymnastics & Acrobatics",
            "Hang Gliding, Para Gliding & Wing Suiting",
            "Horsemanship",
            "Skiing, Snowboarding & Surfing",
            "Whitewater Swimming & Diving",
            "Wrestling",
        ),
    }
)


@dataclass(frozen=True, slots=True)
class WeightCategory:
    """A row of the BZF / body weight table (``bzf_max`` is ``None`` for the open top row)."""

    bzf_min: int
    bzf_max: int | None
    name: str


WEIGHT_CATEGORIES: tuple[WeightCategory, ...] = (
    WeightCategory(8, 8, "Strawweight"),
    WeightCategory(9, 9, "Flyweight/Bantamweight"),
    WeightCategory(10, 10, "Bantamweight/Featherweight"),
    WeightCategory(11, 11, "Lightweight"),
    WeightCategory(12, 12, "Welterweight"),
    WeightCategory(13, 13, "Middleweight"),
    WeightCategory(14, 14, "Light Heavyweight"),
    WeightCategory(15, 19, "Heavyweight"),
    WeightCategory(20, None, "Super Heavyweight"),
)

#: The humanoid body zones, in sheet order. Creatures may use another list.
DEFAULT_ZONES: tuple[str, ...] = (
    "head",
    "chest",
    "abdomen",
    "left arm",
    "right arm",
    "left leg",
    "right leg",
)
