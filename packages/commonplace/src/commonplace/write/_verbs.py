"""English verbs the rewrite into the third person knows. Data, kept apart from the rules.

The rewrite conjugates a verb after "I" only when it knows the word is a verb: "I paint"
-> "Maya paints", but "I def love it" is left to the speaker's own words (quoted) rather
than turned into "Maya defs love it". So the list is of the verbs people use about their
lives, in their base form; a past tense or a participle needs no conjugation and is
listed apart. Lower case, straight apostrophes.
"""

from __future__ import annotations

BASE_VERBS = frozenset(
    """
    accept ache act add admire admit adopt adore advise afford agree aim allow answer
    apologise apologize appear apply appreciate argue arrange arrive ask attend avoid
    bake bank bargain bathe battle be bear beat become beg begin believe belong bet bike
    bind bite blame bleed blend blog bloom blow board boil book borrow bother bounce bowl
    box brag break breathe breed brew bring browse brush build burn bury buy call calm
    camp can care carry carve catch celebrate change charge chase chat cheat check cheer
    chew choose clean clear climb close coach code collect come commute compete complain
    compose concentrate consider contact continue contribute control cook cope copy cost
    cough count cover crave crawl create crochet cross cry cuddle cure curse cut cycle
    dance dare date deal debate decide decorate defend delay deliver demand deny depend
    describe deserve design desire destroy develop die diet dig dine disagree discover
    discuss dislike dive do donate doubt download drag draw dread dream dress drink drive
    drop drown dry dye earn eat edit educate embrace employ encourage end endure enjoy
    enter escape exercise exist expect experience explain explore express face fail fall
    farm fear feed feel fight file fill film find finish fish fit fix flee float flow fly
    focus fold follow forget forgive fry gain garden gather get give glow go golf govern
    grab graduate greet grieve grill grin grind grow guess guide hang happen harvest hate
    have head heal hear heat help hide hike hire hit hold hop hope host hug hunt hurry
    hurt ignore imagine improve include inspire install intend interview invest invite
    iron jog join joke journal judge jump keep kick kill kiss knit knock know label lack
    land last laugh launch lead lean learn leave lend let lie lift like limit listen live
    load lock long look lose love make manage march marry match matter mean measure meet
    meditate melt mend mentor mind miss mix move mow need nap nod note notice nurse obey
    offer open operate order organise organize overcome owe own pack paddle paint park
    pass pay perform pick plan plant play plead pour practice practise pray prefer
    prepare present pretend print produce promise protect prove publish pull pump punch
    push put quit race rain raise rank rate reach react read realise realize receive
    recommend record recover recycle reduce reflect refuse register relate relax release
    rely remember remind remove renovate rent repair repeat reply report rescue research
    rest retire return review ride ring rise risk rock roll row rule run rush sail save
    say scream search see seek sell send serve set settle sew shake shape share shave
    shine shoot shop shout show shower shrink shut sign sing sink sip sit skate sketch
    ski skip sleep slide slip smell smile smoke snack snap sneeze snow soak solve sort
    speak spend spill spin split spoil sponsor sprint stand stare start stay steal step
    stick stop store stream stretch strive struggle study succeed suffer suggest suit
    support suppose surf survive swap swear sweat sweep swim swing take talk taste teach
    tear tell tend test text thank think thrive throw tidy tie tour tow trade train
    transfer translate travel treat trust try tune turn tutor type understand unpack
    upgrade upload use vacuum value visit volunteer vote wait wake walk want warm wash
    watch water wave wear weave weigh welcome whisper win wish wonder work worry wrap
    write yell
    """.split()
)
# Verbs whose third person is not made by rule.
IRREGULAR_THIRD_PERSON = {
    "am": "is",
    "be": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "ain't": "isn't",
}
# Modals, and the negated auxiliaries that stay as they are after any subject.
UNCHANGED_AFTER_SUBJECT = frozenset(
    """can could will would shall should may might must did had was got can't cannot
    couldn't won't wouldn't shouldn't didn't wasn't hadn't mustn't used""".split()
)
# Irregular past tenses and participles: they stay as they are after "the user", and a
# sentence opening with one has dropped its "I" ("Got laid off today").
PAST_FORMS = tuple(
    """said told went got made took came saw found bought left lost met sent won gave felt
    kept thought heard wrote read ate ran put hit quit broke fell knew began sang sat stood
    spent paid brought taught caught built sold woke drove flew forgot threw wore swam
    drank chose spoke rode drew grew shook stole hid bit fought sought held led fed bled
    bred sped slept swept wept crept dealt meant burnt learnt dreamt leapt lent bent sent
    shot lit slid spun stuck struck hung dug clung flung swung rang sprang sank shrank
    stank began became forgave overcame undertook understood withdrew cut set shut""".split()
)
# Words between "I" and its verb that leave the verb where it is: "I really love" ->
# "Maya really loves". Any other -ly word is one too.
ADVERBS = frozenset(
    """just also still never always often usually really actually finally now sometimes
    recently already kinda sorta kind sort last first once no longer even ever mostly
    rarely seldom hardly barely nearly almost truly totally honestly definitely probably
    literally basically seriously personally genuinely absolutely only""".split()
)
# "-ly" words that are verbs, not adverbs.
LY_VERBS = frozenset("apply reply rely supply fly comply multiply ally bully rally tally".split())
# What an informal form says in a note a careful person writes.
INFORMAL = {
    "gonna": "going to",
    "wanna": "want to",
    "gotta": "have to",
    "kinda": "kind of",
    "sorta": "sort of",
    "'cause": "because",
    "cuz": "because",
    "coz": "because",
}
