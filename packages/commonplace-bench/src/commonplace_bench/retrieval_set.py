"""A generated, seeded retrieval set of notes about one user, with graded queries.

commonplace stores one-sentence notes ("The user moved to Lisbon last week.") and
recalls them for a question, so that is what the set looks like: each fact below is
a note template, a few same-topic *decoys* (true notes that do not answer), and one
query in each of three phrasings, to separate what an embedder is good at:

``lexical``      the question reuses the note's words ("Which city did the user move to?")
``paraphrase``   same meaning, little shared wording ("Where does she live these days?")
``first_person`` how a user actually asks ("what city am I living in now?")

The seed picks the slot values of targets and decoys and the filler notes, and
shuffles the order, so two seeds give two different sets with the same structure.
All text here was written for this benchmark.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

__all__ = ["GROUPS", "Group", "Query", "RetrievalSet", "build_retrieval_set", "fact_count"]

Group = Literal["lexical", "paraphrase", "first_person"]
GROUPS: tuple[Group, ...] = ("lexical", "paraphrase", "first_person")


@dataclass(frozen=True, slots=True)
class Query:
    """A question and the index (into ``RetrievalSet.notes``) of its one relevant note."""

    text: str
    group: Group
    relevant: int


@dataclass(frozen=True, slots=True)
class RetrievalSet:
    seed: int
    notes: tuple[str, ...]
    queries: tuple[Query, ...]


@dataclass(frozen=True, slots=True)
class _Fact:
    note: str  # template; "{v}" is the slot
    values: tuple[str, ...]
    lexical: str
    paraphrase: str
    first_person: str
    decoys: tuple[str, ...]  # templates; "{v}" gets a value other than the target's


def _f(
    note: str,
    values: str,
    lexical: str,
    paraphrase: str,
    first_person: str,
    *decoys: str,
) -> _Fact:
    return _Fact(note, tuple(values.split("|")), lexical, paraphrase, first_person, decoys)


_FACTS: tuple[_Fact, ...] = (
    # places
    _f(
        "The user moved to {v} last week.",
        "Lisbon|Montreal|Osaka|Nairobi|Tallinn|Denver",
        "Which city did the user move to last week?",
        "Where does she live these days?",
        "what city am I living in now?",
        "The user's brother moved to {v} in 2019.",
        "The user grew up in {v}.",
        "The user spent a long weekend in {v} in March.",
    ),
    _f(
        "The user's mother lives in a care home in {v}.",
        "Leeds|Cork|Graz|Lyon|Utrecht",
        "Where does the user's mother live?",
        "Where is her mum being looked after?",
        "which town is my mom's care home in?",
        "The user's mother grew up on a farm near {v}.",
    ),
    _f(
        "The user's apartment is on the {v} floor and the building has no elevator.",
        "fourth|fifth|sixth|third",
        "Which floor is the user's apartment on?",
        "How many flights of stairs does she climb to get home?",
        "what floor do I live on?",
        "The user's office is on the {v} floor.",
    ),
    # work
    _f(
        "The user started a new job as a {v} at a logistics company.",
        "data analyst|nurse|product manager|civil engineer|UX designer|pharmacist",
        "What new job did the user start?",
        "What does she do for a living now?",
        "what's my current role again?",
        "The user used to work as a {v} before the pandemic.",
        "The user's partner works as a {v}.",
        "The user is considering retraining as a {v}.",
    ),
    _f(
        "The user's employer is {v}.",
        "Northwind Labs|Aperture Freight|Bluefin Analytics|Kestrel Health|Orchard Robotics",
        "Who is the user's employer?",
        "Which company pays her salary?",
        "which company do I work for?",
        "The user interviewed at {v} but turned the offer down.",
        "The user's friend just joined {v}.",
    ),
    _f(
        "The user's manager is {v}, who is strict about deadlines.",
        "Greta|Howard|Amara|Felix",
        "Who is the user's manager?",
        "Who does she report to at the office?",
        "what's my boss's name?",
        "The user mentors a junior colleague named {v}.",
        "The user's previous manager {v} retired.",
    ),
    _f(
        "The user is speaking at {v} in June.",
        "PyCon|KubeCon|Web Summit|SIGGRAPH|RSA Conference",
        "Which event is the user speaking at in June?",
        "Where is she giving a talk this summer?",
        "what conference am I presenting at?",
        "The user attended {v} as a volunteer in 2021.",
        "The user's colleague submitted a proposal to {v}.",
    ),
    # people
    _f(
        "The user's sister is called {v}.",
        "Marta|Ingrid|Priya|Chloe|Yuki|Fatima",
        "What is the user's sister called?",
        "What is her sibling's name?",
        "what's my sister's name again?",
        "The user's cousin is called {v}.",
        "The user's best friend from school was called {v}.",
    ),
    _f(
        "The user's partner is called {v}.",
        "Tomas|Daniel|Kenji|Omar|Lukas|Mateo",
        "What is the user's partner called?",
        "Who is she in a relationship with?",
        "do you remember my boyfriend's name?",
        "The user went to the wedding of her friend {v} in June.",
        "The user's ex {v} still sends her messages.",
    ),
    _f(
        "The user's best friend {v} lives in Glasgow.",
        "Siobhan|Arjun|Leila|Marcus|Noor",
        "Who is the user's best friend?",
        "Who is she closest to outside her family?",
        "who's my best mate again?",
        "The user fell out with her old friend {v}.",
        "The user met {v} at a climbing gym.",
    ),
    _f(
        "The user's son {v} is in second grade.",
        "Leo|Ethan|Kofi|Hugo|Samir",
        "What grade is the user's son in?",
        "Which year of primary school is her kid in?",
        "what grade is my boy in now?",
        "The user's nephew {v} starts school in September.",
        "The user coaches a children's football team that includes {v}.",
    ),
    # pets
    _f(
        "The user has a beagle named {v}.",
        "Pepper|Biscuit|Nori|Ziggy|Mocha|Rufus",
        "What is the name of the user's beagle?",
        "What does she call her hound?",
        "what's my dog called?",
        "The user's neighbour has a cat named {v}.",
        "The user fostered a kitten called {v} last winter.",
    ),
    _f(
        "The user's cat {v} needs thyroid pills twice a day.",
        "Miso|Clementine|Olive|Pixel",
        "How often does the user's cat need thyroid pills?",
        "Is her pet on any ongoing treatment?",
        "how many times a day do I give my cat her meds?",
        "The user's cat {v} hates the travel carrier.",
        "The user took her cat {v} for a dental cleaning.",
    ),
    # health
    _f(
        "The user is allergic to {v}.",
        "peanuts|shellfish|penicillin|latex|sesame",
        "What is the user allergic to?",
        "What gives her a bad reaction?",
        "what am I allergic to, remind me?",
        "The user's son is allergic to {v}.",
        "The user thought she reacted to {v} but the test came back negative.",
    ),
    _f(
        "The user takes {v} every morning for blood pressure.",
        "lisinopril|amlodipine|losartan|ramipril",
        "What does the user take every morning for blood pressure?",
        "Which medicine is she on for hypertension?",
        "what's the name of my BP pill?",
        "The user's father takes {v} for his heart.",
        "The user stopped taking {v} because it made her cough.",
    ),
    _f(
        "The user tore a ligament in her {v} while skiing.",
        "left knee|right ankle|left wrist|right shoulder",
        "What did the user tear while skiing?",
        "How did she get hurt on the slopes?",
        "which joint did I injure on my ski trip?",
        "The user's friend broke her {v} playing football.",
        "The user had an X-ray of her {v} in 2021 that was clear.",
    ),
    _f(
        "The user does yoga {v} a week for her back pain.",
        "twice|three times|four times",
        "How often does the user do yoga for her back pain?",
        "What does she do to help her sore spine?",
        "how many yoga sessions should I do per week?",
        "The user's sister teaches yoga {v} a week.",
    ),
    _f(
        "The user wears glasses with a {v} prescription.",
        "-2.5|-4.0|+1.75|-1.25",
        "What is the user's glasses prescription?",
        "How strong are her spectacles?",
        "what's my eye prescription?",
        "The user lost her sunglasses at the beach.",
    ),
    _f(
        "The user has trouble sleeping and usually goes to bed at {v}.",
        "11pm|midnight|10pm|1am",
        "What time does the user usually go to bed?",
        "When does she turn in for the night?",
        "what time do I normally hit the sack?",
        "The user's favourite podcast publishes new episodes at {v}.",
    ),
    # food
    _f(
        "The user follows a {v} diet.",
        "vegetarian|vegan|pescatarian",
        "What diet does the user follow?",
        "Does she eat meat?",
        "what eating plan am I on?",
        "The user's roommate is {v}.",
        "The user tried a {v} diet for a month in 2020.",
    ),
    _f(
        "The user's favourite dish is {v}.",
        "mushroom risotto|pad thai|shakshuka|ramen|paella|pierogi",
        "What is the user's favourite dish?",
        "What does she most love to eat?",
        "what food do I like best?",
        "The user cooked {v} for a dinner party on Saturday.",
        "The user dislikes {v}.",
    ),
    _f(
        "The user takes her coffee {v}.",
        "black|with oat milk|with two sugars|as a flat white",
        "How does the user take her coffee?",
        "How does she like her morning brew prepared?",
        "how do I like my coffee?",
        "The user switched to decaf after 2pm.",
        "The user's coworker always orders coffee {v}.",
    ),
    # hobbies
    _f(
        "The user plays {v} on Tuesday evenings.",
        "the cello|badminton|chess|water polo|bass guitar|volleyball",
        "What does the user play on Tuesday evenings?",
        "What does she do for fun after work early in the week?",
        "what's my Tuesday night activity?",
        "The user gave up {v} when she was a teenager.",
        "The user's daughter is learning {v}.",
    ),
    _f(
        "The user is training for the {v} marathon in October.",
        "Chicago|Amsterdam|Frankfurt|Toronto|Athens",
        "Which marathon is the user training for?",
        "What long-distance race is she preparing to run this autumn?",
        "which race am I getting ready for?",
        "The user cheered for a friend at the {v} half marathon.",
        "The user ran a 10k in {v} in 2022.",
    ),
    _f(
        "The user is reading {v} for her book club.",
        "Middlemarch|The Overstory|Piranesi|Beloved|Stoner|Dune",
        "Which book is the user reading for her book club?",
        "What novel is her reading group discussing?",
        "what book am I supposed to finish for book club?",
        "The user abandoned {v} halfway through.",
        "The user recommended {v} to her mother.",
    ),
    _f(
        "The user is learning {v} on a phone app.",
        "Portuguese|Japanese|Swahili|Finnish|Korean|Dutch",
        "Which language is the user learning?",
        "What foreign tongue is she studying?",
        "what language am I practising?",
        "The user's grandmother spoke {v} at home.",
        "The user took {v} classes in high school and forgot most of it.",
    ),
    _f(
        "The user listens to {v} while working.",
        "lo-fi hip hop|Bach cello suites|synthwave|Brazilian jazz",
        "What does the user listen to while working?",
        "What music does she put on to concentrate?",
        "what do I usually play when I'm focusing?",
        "The user saw a {v} concert last month.",
        "The user's partner can't stand {v}.",
    ),
    _f(
        "The user volunteers at a {v} on Saturdays.",
        "food bank|animal shelter|community garden|public library",
        "Where does the user volunteer on Saturdays?",
        "What charity work does she do at weekends?",
        "where do I help out on weekends?",
        "The user donated to a {v} in December.",
    ),
    # education
    _f(
        "The user has a master's degree in {v}.",
        "marine biology|economics|computer science|architecture|linguistics",
        "What is the user's master's degree in?",
        "What did she study at graduate level?",
        "what did I do my masters in?",
        "The user's undergraduate minor was {v}.",
        "The user is thinking about an online course in {v}.",
    ),
    _f(
        "The user is taking an evening class in {v}.",
        "pottery|welding|Italian cooking|life drawing|accounting",
        "What evening class is the user taking?",
        "What night course did she sign up for?",
        "what class do I have after work?",
        "The user dropped out of a {v} workshop in 2019.",
    ),
    # tech settings
    _f(
        "The user's dev server runs on port {v}.",
        "8080|5173|3000|8443|9000",
        "Which port does the user's dev server run on?",
        "Where does her local web app listen?",
        "what port is my dev server on?",
        "The user's Postgres database uses port {v}.",
        "The user blocked port {v} on the office firewall.",
    ),
    _f(
        "The user's code editor is {v}.",
        "VS Code|Neovim|Zed|PyCharm|Emacs|Sublime Text",
        "What code editor does the user use?",
        "Which program does she write software in?",
        "which IDE do I use?",
        "The user tried {v} for a week and went back.",
        "The user's team lead uses {v}.",
    ),
    _f(
        "The user's laptop runs {v}.",
        "Fedora|macOS Sonoma|Windows 11|Ubuntu 24.04|Arch Linux|Debian 12",
        "What does the user's laptop run?",
        "Which operating system is on her notebook computer?",
        "what OS is my laptop on?",
        "The user's home server runs {v}.",
        "The user's work desktop runs {v}.",
    ),
    _f(
        "The user's calendar is set to the {v} time zone.",
        "Pacific|Central European|Japan Standard|Eastern|India Standard",
        "Which time zone is the user's calendar set to?",
        "What clock region should meetings with her be scheduled in?",
        "what timezone am I in?",
        "The user's main client works on {v} time.",
    ),
    _f(
        "The user pins her project to Python {v}.",
        "3.10|3.11|3.12|3.9",
        "Which Python version does the user pin her project to?",
        "What interpreter release does her codebase require?",
        "which version of python is my project on?",
        "The user's CI still tests on Python {v}.",
        "The user's old laptop only has Python {v}.",
    ),
    _f(
        "The user's default git branch is called {v}.",
        "main|trunk|develop|master",
        "What is the user's default git branch called?",
        "Where do her pull requests land?",
        "what's the name of my default branch?",
        "The user deleted a stale {v} branch from an old repo.",
        "The user's open-source fork still uses {v}.",
    ),
    _f(
        "The user deploys her app to the {v} region.",
        "eu-west-1|us-east-2|ap-southeast-1|eu-central-1",
        "Which region does the user deploy her app to?",
        "In which data centre area is her service hosted?",
        "where's my app deployed?",
        "The user's backups are copied to {v}.",
        "The user had an outage in {v} last quarter.",
    ),
    _f(
        "The user's shell is {v} with a minimal prompt.",
        "zsh|fish|bash|nushell",
        "What shell does the user use?",
        "Which command-line interpreter does she type into?",
        "what's my terminal shell?",
        "The user writes deployment scripts in {v} for portability.",
    ),
    _f(
        "The user rotates her API keys every {v}.",
        "30 days|90 days|quarter|six months",
        "How often does the user rotate her API keys?",
        "How frequently does she swap out her access credentials?",
        "when am I supposed to rotate my keys?",
        "The user's company requires password changes every {v}.",
    ),
    _f(
        "The user's home Wi-Fi network is named {v}.",
        "Pepperoni|Hearth|FBI Van|Skynet5G",
        "What is the user's home Wi-Fi network named?",
        "What's her internet connection called at the house?",
        "what's my wifi called?",
        "The user's office guest network is named {v}.",
    ),
    _f(
        "The user's phone is a {v}.",
        "Pixel 8|iPhone 13 mini|Fairphone 5|Galaxy S23",
        "What phone does the user have?",
        "Which mobile handset does she carry?",
        "what kind of phone do I have?",
        "The user's old {v} has a cracked screen.",
        "The user bought her mother a {v}.",
    ),
    _f(
        "The user backs up her photos to {v} every Sunday.",
        "an external SSD|a NAS|Backblaze|Google Photos",
        "Where does the user back up her photos?",
        "Where does she keep copies of her pictures safe?",
        "where do my photo backups go?",
        "The user's partner keeps all his photos on {v}.",
    ),
    # events
    _f(
        "The user's birthday is on {v}.",
        "March 14|July 2|November 23|January 9|September 30",
        "When is the user's birthday?",
        "What date was she born?",
        "do you remember what day I was born?",
        "The user's mother's birthday is on {v}.",
        "The user's work anniversary is on {v}.",
    ),
    _f(
        "The user is getting married in {v} next spring.",
        "Sintra|Lake Como|Edinburgh|Kyoto|Santorini",
        "Where is the user getting married?",
        "Where will her wedding ceremony take place?",
        "where's my wedding venue again?",
        "The user attended a friend's wedding in {v}.",
        "The user's parents got married in {v}.",
    ),
    _f(
        "The user has a dentist appointment on {v}.",
        "Monday at 9am|Thursday afternoon|the 12th|Friday morning",
        "When is the user's dentist appointment?",
        "When does she need to get her teeth checked?",
        "when am I seeing the dentist?",
        "The user has a haircut booked for {v}.",
    ),
    _f(
        "The user is flying to {v} for a work trip on the 3rd.",
        "Seoul|Bogotá|Reykjavik|Cape Town|Helsinki",
        "Where is the user flying for her work trip?",
        "Which city is her upcoming business travel to?",
        "where am I going for work next month?",
        "The user's holiday in {v} was cancelled last year.",
    ),
    _f(
        "The user always books {v} seats on flights.",
        "window|aisle|exit-row|front-row",
        "Which seats does the user book on flights?",
        "Where does she like to sit on a plane?",
        "what seat should I pick when I fly?",
        "The user gets motion sickness on long bus rides.",
    ),
    # money, home, getting around
    _f(
        "The user is saving {v} for a deposit on a flat.",
        "40,000 euros|25,000 pounds|60,000 dollars",
        "How much is the user saving for a flat deposit?",
        "What's her target for buying a home?",
        "how much do I need to put aside for the apartment?",
        "The user lent her brother {v} last year.",
        "The user's rent went up by 8 percent.",
    ),
    _f(
        "The user banks with {v}.",
        "Monzo|ING|Chase|Revolut|Santander",
        "Which bank does the user bank with?",
        "Where does she keep her money?",
        "which bank am I with?",
        "The user closed her old account at {v}.",
    ),
    _f(
        "The user drives a {v}.",
        "2014 Honda Civic|Nissan Leaf|Volvo estate|Fiat Panda|Toyota Prius",
        "What car does the user drive?",
        "What vehicle does she own?",
        "what car do I have?",
        "The user's father restored an old {v}.",
        "The user rented a {v} on holiday.",
    ),
    _f(
        "The user cycles {v} to work every day.",
        "8 km|12 km|5 km|20 km",
        "How far does the user cycle to work?",
        "How long is her bike ride to the office?",
        "how many kilometres is my commute?",
        "The user's colleague cycles {v} on weekends.",
    ),
    _f(
        "The user prefers answers {v}.",
        "as short bullet points|in plain prose|with code examples first|in Spanish",
        "How does the user prefer answers?",
        "What response style suits her best?",
        "how should you format replies to me?",
        "The user's team writes documentation {v}.",
    ),
)

# Filler: notes about the user that answer none of the queries, from the same life.
_FILLER: tuple[str, ...] = (
    "The user had lunch with {person} on {day}.",
    "The user asked for help writing an email to {person}.",
    "The user scheduled a call with {person} for {day}.",
    "The user watched {film} on {day} and found it slow.",
    "The user asked for a recipe for {food}.",
    "The user bought a new {item} online.",
    "The user complained that her new {item} stopped working.",
    "The user is repainting the {room} {colour}.",
    "The user planted {plant} on her balcony.",
    "The user asked how to fix a {error} in her script.",
    "The user asked about the weather in {city} for {day}.",
    "The user asked for gift ideas for {person}.",
    "The user cleaned out the {room} on {day}.",
    "The user is looking for a cheaper {item}.",
)
_SLOTS: dict[str, tuple[str, ...]] = {
    "person": ("Dana", "Moritz", "Aisha", "Pavel", "Lucía", "Theo", "Grace", "Ravi"),
    "day": ("Monday", "Wednesday", "Friday", "Sunday", "the weekend"),
    "film": ("Arrival", "Paddington 2", "Oppenheimer", "Spirited Away"),
    "food": ("banana bread", "dal", "focaccia", "gazpacho", "dumplings"),
    "item": ("kettle", "desk lamp", "vacuum cleaner", "backpack", "monitor"),
    "room": ("kitchen", "hallway", "bathroom", "spare room"),
    "colour": ("sage green", "off-white", "terracotta"),
    "plant": ("basil", "tomatoes", "lavender", "chillies"),
    "error": ("KeyError", "timeout", "segfault", "unicode error"),
    "city": ("Madrid", "Oslo", "Dublin", "Prague"),
}


def fact_count() -> int:
    """How many facts (and so queries per group) the full set has."""
    return len(_FACTS)


def build_retrieval_set(
    *, seed: int = 20240601, facts: int | None = None, notes: int = 300
) -> RetrievalSet:
    """Generate the set: ``facts`` facts (all by default), padded with filler to ``notes``.

    Every fact gives one target note, its decoys and three queries, so the set has
    ``3 * facts`` queries; filler is only added, never used to cut decoys, so fewer
    notes than targets plus decoys yields a set slightly over ``notes``.
    """
    rng = random.Random(seed)
    chosen = list(_FACTS) if facts is None else rng.sample(_FACTS, facts)
    texts: list[str] = []
    targets: list[int] = []
    for fact in chosen:
        values = rng.sample(fact.values, len(fact.values))
        targets.append(len(texts))
        texts.append(fact.note.format(v=values[0]))
        texts.extend(
            decoy.format(v=values[1 + i % (len(values) - 1)]) for i, decoy in enumerate(fact.decoys)
        )
    seen = set(texts)
    attempts = 0
    while len(texts) < notes:
        attempts += 1
        if attempts > 100 * notes:
            raise ValueError(f"cannot generate {notes} distinct notes from the filler templates")
        template = rng.choice(_FILLER)
        text = template.format(**{k: rng.choice(v) for k, v in _SLOTS.items()})
        if text not in seen:
            seen.add(text)
            texts.append(text)

    order = list(range(len(texts)))
    rng.shuffle(order)
    position = {old: new for new, old in enumerate(order)}
    queries = [
        Query(text=getattr(fact, group), group=group, relevant=position[target])
        for group in GROUPS
        for fact, target in zip(chosen, targets, strict=True)
    ]
    return RetrievalSet(seed=seed, notes=tuple(texts[i] for i in order), queries=tuple(queries))
