"""Word lists the rule-based note writer reads. Data, kept apart from the rules."""

from __future__ import annotations

# Whole turns that carry nothing worth remembering.
NOISE = frozenset(
    """ok okay k kk okk lol lmao lmfao rofl haha hahaha hehe wait hmm hm hmmm mm thanks thank
    thx ty tysm yes no yeah yep yup nope nah sure cool nice great good fine alright right hi
    hello hey heya yo bye cya gn brb np ikr idk wow oh ah uh um ugh same true mhm word bet
    gotcha sounds perfect awesome please pls sorry oops whoa omg""".split()
)
NOISE_PHRASES = frozenset(
    {
        "thank you",
        "good night",
        "good morning",
        "see you",
        "see ya",
        "ok wait",
        "wait what",
        "got it",
        "makes sense",
        "no worries",
        "of course",
        "i see",
        "oh ok",
        "oh okay",
        "ok cool",
        "sounds good",
        "never mind",
        "nevermind",
        "all good",
        "fair enough",
        "ok thanks",
        "okay thanks",
        "thanks a lot",
        "you too",
        "me too",
        "not really",
        "i guess",
        "go on",
        "tell me more",
        "one sec",
        "hold on",
        "lol ok",
        "haha yes",
    }
)

JOKE_MARKERS = ("lol", "lmao", "haha", "hehe", "jk", "just kidding", "kidding", "rofl", "/s")
JOKE_EMOJI = ("😂", "🤣", "😜", "😝", "😆")

QUOTE_MARKERS = (
    "you said",
    "you told me",
    "you mentioned",
    "you wrote",
    "you just said",
    "you suggested",
    "you claimed",
    "you recommended",
    "according to you",
    "like you said",
    "as you said",
)

HYPOTHETICAL_MARKERS = (
    "what if",
    "imagine",
    "suppose",
    "hypothetically",
    "if i were",
    "if i had",
    "if i was",
    "if i could",
    "i wonder if",
    "in theory",
    "let's say",
    "lets say",
    "pretend",
)

QUESTION_OPENERS = (
    "what",
    "who",
    "whom",
    "whose",
    "where",
    "when",
    "why",
    "how",
    "which",
    "do you",
    "does",
    "did you",
    "can you",
    "could you",
    "would you",
    "should i",
    "is it",
    "is there",
    "are there",
    "are you",
    "will you",
    "have you",
    "any idea",
    "any tips",
)

EMOTIONS: dict[str, tuple[str, ...]] = {
    "joy": (
        "happy",
        "glad",
        "thrilled",
        "excited",
        "delighted",
        "love",
        "loving",
        "proud",
        "grateful",
        "overjoyed",
        "can't wait",
        "stoked",
        "yay",
    ),
    "sadness": (
        "sad",
        "miss",
        "lonely",
        "depressed",
        "heartbroken",
        "crying",
        "cried",
        "down",
        "devastated",
        "grieving",
        "upset",
        "hurts",
        "unhappy",
    ),
    "anger": (
        "angry",
        "furious",
        "annoyed",
        "hate",
        "mad",
        "pissed",
        "irritated",
        "livid",
        "frustrated",
        "fed up",
    ),
    "fear": (
        "scared",
        "afraid",
        "anxious",
        "worried",
        "nervous",
        "terrified",
        "panicking",
        "dread",
        "freaking out",
    ),
    "stress": (
        "stressed",
        "overwhelmed",
        "exhausted",
        "burned out",
        "burnt out",
        "drained",
        "swamped",
    ),
    "surprise": ("shocked", "surprised", "can't believe", "cannot believe", "unbelievable"),
}

# Major life events: pattern fragments (lower case) -> event tag.
LIFE_EVENTS: tuple[tuple[str, str], ...] = (
    ("laid off", "layoff"),
    ("got fired", "layoff"),
    ("lost my job", "layoff"),
    ("was fired", "layoff"),
    ("let go from", "layoff"),
    ("broke up", "breakup"),
    ("broken up", "breakup"),
    ("dumped me", "breakup"),
    ("divorce", "breakup"),
    ("split up", "breakup"),
    ("passed away", "death"),
    ("died", "death"),
    ("funeral", "death"),
    ("lost my mom", "death"),
    ("lost my dad", "death"),
    ("got engaged", "engagement"),
    ("we're engaged", "engagement"),
    ("proposed", "engagement"),
    ("got married", "marriage"),
    ("wedding", "marriage"),
    ("had a baby", "birth"),
    ("gave birth", "birth"),
    ("was born", "birth"),
    ("pregnant", "birth"),
    ("newborn", "birth"),
    ("i moved to", "move"),
    ("we moved to", "move"),
    ("i'm moving to", "move"),
    ("we're moving to", "move"),
    ("i just moved", "move"),
    ("we just moved", "move"),
    ("i relocated to", "move"),
    ("i'm relocating to", "move"),
    ("moved house", "move"),
    ("diagnosed", "diagnosis"),
    ("diagnosis", "diagnosis"),
    ("new job", "new_job"),
    ("got the job", "new_job"),
    ("got hired", "new_job"),
    ("started working at", "new_job"),
    ("promoted", "promotion"),
    ("graduated", "graduation"),
    ("retired", "retirement"),
)

OCCUPATION_ENDINGS = ("er", "or", "ist", "ian", "ant", "ent", "eer", "ect")
OCCUPATIONS = frozenset(
    """nurse teacher engineer developer doctor chef designer student lawyer accountant
    architect pilot dentist pharmacist scientist researcher artist writer musician
    photographer plumber electrician carpenter mechanic firefighter paramedic barista
    cashier consultant analyst manager professor tutor therapist vet veterinarian programmer
    freelancer journalist editor translator farmer baker butcher""".split()
)
NOT_OCCUPATIONS = frozenset(
    """bit little lot fan big huge member part beginner sucker person morning night mess
    wreck""".split()
)

PARTNER_WORDS = (
    "wife",
    "husband",
    "partner",
    "girlfriend",
    "boyfriend",
    "fiance",
    "fiancé",
    "fiancee",
    "fiancée",
    "spouse",
)
KIN_WORDS = (
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "sister",
    "brother",
    "son",
    "daughter",
    "friend",
    "boss",
    "cousin",
    "aunt",
    "uncle",
    "grandma",
    "grandpa",
    "grandmother",
    "grandfather",
    "coworker",
    "colleague",
    "roommate",
    "neighbor",
    "neighbour",
    "dog",
    "cat",
    "kid",
    "baby",
    "niece",
    "nephew",
    "manager",
    "therapist",
)

DISCOURSE_OPENERS = (
    "so",
    "well",
    "oh",
    "btw",
    "anyway",
    "anyways",
    "ok so",
    "okay so",
    "um",
    "uh",
    "also",
    "and",
    "but",
    "hey",
    "hi",
    "actually",
    "fyi",
    "ps",
)

MONTHS_AND_DAYS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)

# Words that open a sentence without naming anything.
SENTENCE_STARTERS = frozenset(
    """today yesterday tomorrow tonight last next this that these those there here update
    lately recently honestly basically apparently finally anyway maybe perhaps sometimes
    everyone everything nobody nothing someone something after before since when while
    because although though once still even only never always usually got had went started
    just really also please thanks sorry guess""".split()
)
