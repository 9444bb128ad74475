"""Word lists the rule-based note writer reads. Data, kept apart from the rules.

Everything here is lower case with straight apostrophes: the writer folds a turn
the same way before it matches. Entries of the ``*_PATTERNS`` tables are regular
expression fragments; every other entry is a literal word or phrase.
"""

from __future__ import annotations

# Whole turns that carry nothing worth remembering.
NOISE = frozenset(
    """ok okay k kk okk lol lmao lmfao rofl haha hahaha hehe wait hmm hm hmmm mm thanks thank
    thx ty tysm yes no yeah yep yup nope nah sure cool nice great good fine alright right hi
    hello hey heya yo bye cya gn brb np ikr idk wow oh ah uh um ugh same true mhm word bet
    gotcha sounds perfect awesome please pls sorry oops whoa omg fair interesting noted
    agreed exactly indeed totally definitely helps helped helpful worries back typo night
    morning welcome lovely neat righto""".split()
)
# Words that may stand next to noise words without making the turn worth a note
# ("thank you so much", "that's fair", "ok got it").
FILLER = frozenset(
    """i i'm im it it's its that that's thats this so much very really a lot at all to me
    you u for the just too one thing again then now and but of got is was be see
    sounds""".split()
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
# A word made only of laughter ("hahaha", "lmaooo", "lolol", "xD").
LAUGHTER_PATTERN = r"(?:a?h[ae])+h?|(?:lo)+l+z?|lma+o+|lmfa+o+|ro+fl|x+d+"
# Other one-word sounds of assent or hesitation ("mmhmm", "uh", "huh", "okie").
MURMUR_PATTERN = r"m+h*m+|u+h+|h+u+h+|h+m+|o+k+(?:ie|ey|ay)?|okie|dokie|ye+p*s*|ya+y*"

# Laughter: the user finds something funny, which may be a joke or a real event.
LAUGHTER_MARKERS = ("lol", "lmao", "lmfao", "haha", "hahaha", "hehe", "rofl")
LAUGHTER_EMOJI = ("😂", "🤣", "😜", "😝", "😆", "😅", "🤪")
# Saying outright that it was not meant.
JOKE_MARKERS = ("jk", "j/k", "just kidding", "only kidding", "kidding", "/s")
# Sarcasm: praise that means the opposite; the turn is a joke with an annoyed tone.
SARCASM_PATTERNS = (
    r"just what i (?:needed|wanted)",
    r"exactly what i (?:needed|wanted)",
    r"^(?:oh )?(?:great|wonderful|fantastic|perfect|lovely|awesome|yay),? (?:another|just|more)\b",
    r"^oh (?:joy|great|wonderful|goody)\b",
    r"\byeah,? right\b",
    r"^yeah,? (?:i )?(?:just |totally |really )?love\b",
    r"\blove that for me\b",
    r"\bsaid no one ever\b",
    r"^sure,? because\b",
    r"\bis everyone's favou?rite\b",
)

QUOTE_MARKERS = (
    "you said",
    "you say",
    "you told me",
    "you mentioned",
    "you wrote",
    "you just said",
    "you suggested",
    "you claimed",
    "you recommended",
    "you were right",
    "you were wrong",
    "you promised",
    "according to you",
    "like you said",
    "as you said",
    "your previous",
)
# Reported speech of an assistant ("the assistant told me I live in Paris", "ChatGPT
# says ..."): what it said is a quote, never the user's own fact, exactly as "you said"
# is. Only names that mean a machine: "my agent told me" is as likely a person.
ASSISTANT_NAMES = (
    "assistant",
    "ai",
    "a.i.",
    "ai assistant",
    "ai agent",
    "ai model",
    "language model",
    "bot",
    "chatbot",
    "chat bot",
    "copilot",
    "llm",
    "chatgpt",
    "gpt",
    "claude",
    "gemini",
    "siri",
    "alexa",
)
REPORTING_VERBS = (
    "said",
    "says",
    "told me",
    "tells me",
    "told us",
    "mentioned",
    "wrote",
    "suggested",
    "claimed",
    "claims",
    "thinks",
    "thought",
    "replied",
    "answered",
    "recommended",
    "insisted",
    "reckons",
    "figured",
    "guessed",
    "assumed",
    "informed me",
    "reminded me",
    "explained",
    "decided",
    "concluded",
)
# "your answer", "your last recipe": something the assistant produced.
QUOTED_THINGS = (
    "answer",
    "reply",
    "response",
    "suggestion",
    "suggestions",
    "advice",
    "recommendation",
    "recommendations",
    "recipe",
    "tip",
    "tips",
    "idea",
    "ideas",
    "plan",
    "list",
    "explanation",
    "code",
    "summary",
    "translation",
)

HYPOTHETICAL_MARKERS = (
    "what if",
    "imagine",
    "suppose",
    "supposing",
    "hypothetically",
    "if i were",
    "if i had",
    "if i was",
    "if i could",
    "in theory",
    "let's say",
    "lets say",
    "pretend",
    "what would happen if",
    "what happens if",
    "in a world where",
    "if only",
)
# A sentence that opens with these and goes on to "would", "could" ... is a
# conditional: "say I got married next year, would my taxes change?".
CONDITIONAL_OPENERS = ("if", "say", "assuming", "assume", "supposing", "suppose")

QUESTION_WORDS = ("what", "who", "whom", "whose", "where", "when", "why", "how", "which")
# Verbs that open a yes/no question when a pronoun or determiner follows them.
QUESTION_AUXILIARIES = (
    "do",
    "does",
    "did",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "would",
    "will",
    "should",
    "shall",
    "have",
    "has",
    "am",
    "may",
    "r",
    "didn't",
    "don't",
    "doesn't",
    "isn't",
    "aren't",
    "won't",
    "wouldn't",
    "can't",
    "shouldn't",
)
QUESTION_SUBJECTS = (
    "i",
    "you",
    "u",
    "we",
    "it",
    "there",
    "they",
    "he",
    "she",
    "my",
    "your",
    "the",
    "this",
    "that",
    "these",
    "those",
    "a",
    "an",
    "any",
    "anyone",
    "someone",
)
QUESTION_OPENERS = ("any idea", "any tips", "any ideas", "any advice", "any recommendations")
# Imperatives addressed to the assistant: a request is recorded as a question.
REQUEST_VERBS = (
    "tell",
    "recommend",
    "suggest",
    "explain",
    "translate",
    "help",
    "give",
    "show",
    "list",
    "summarize",
    "summarise",
    "describe",
    "compare",
    "draft",
    "remind",
    "teach",
    "walk",
    "define",
    "calculate",
    "convert",
    "generate",
    "rewrite",
    "proofread",
    "please",
    "pls",
)
# "I need a recipe for ...": a request dressed as a statement.
REQUEST_PATTERNS = (
    r"^i(?:'m| am)? (?:need|want|would like|'d like|looking for) (?:a|an|some|any|good) "
    r"(?:\w+ )?(?:recipe|idea|tip|suggestion|recommendation|advice|name|word|example|template"
    r"|list)s?\b",
    r"^i have a question\b",
)

EMOTIONS: dict[str, tuple[str, ...]] = {
    "joy": (
        "happy",
        "glad",
        "thrilled",
        "excited",
        "delighted",
        "love",
        "loved",
        "loving",
        "proud",
        "grateful",
        "overjoyed",
        "can't wait",
        "stoked",
        "yay",
        "relieved",
        "ecstatic",
        "enjoyed",
        "over the moon",
        "wonderful",
    ),
    "sadness": (
        "sad",
        "miss",
        "lonely",
        "depressed",
        "heartbroken",
        "crying",
        "cried",
        "feeling down",
        "feel down",
        "so down",
        "devastated",
        "grieving",
        "upset",
        "unhappy",
        "gutted",
        "miserable",
        "heartbreaking",
    ),
    "anger": (
        "angry",
        "furious",
        "annoyed",
        "annoying",
        "hate",
        "mad",
        "pissed",
        "irritated",
        "livid",
        "frustrated",
        "frustrating",
        "fed up",
        "ugh",
        "driving me crazy",
        "driving me nuts",
        "driving me up the wall",
        "drives me crazy",
        "sick of",
        "can't stand",
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
        "dreading",
        "freaking out",
        "stay calm",
    ),
    "stress": (
        "stressed",
        "overwhelmed",
        "exhausted",
        "burned out",
        "burnt out",
        "drained",
        "swamped",
        "stressful",
    ),
    "surprise": ("shocked", "surprised", "can't believe", "cannot believe", "unbelievable"),
}
# Events good enough that an exclamation mark announcing them reads as joy.
HAPPY_EVENTS = frozenset(
    {"engagement", "marriage", "birth", "new_job", "promotion", "graduation", "retirement"}
)

_KIN = (
    r"(?:mom|mum|mother|dad|father|parents|grand(?:ma|pa|mother|father|parents|dad)|grandad|"
    r"nana|granny|gran|"
    r"brother|sister|son|daughter|wife|husband|partner|uncle|aunt|cousin|"
    r"best friend|friend|girlfriend|boyfriend|fianc[ée]e?|dog|cat)"
)
# Things that "die" without anyone dying.
_DEVICES = (
    r"phone|battery|laptop|computer|pc|car|tv|plant|plants|signal|wifi|internet|"
    r"conversation|mood|engine|server|app|game|screen|charger|mouse|keyboard|headphones"
)

# Major life events: regular-expression fragments (matched on the folded turn) -> tag.
# The earliest match in the turn wins.
LIFE_EVENT_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"laid off", "layoff"),
    (r"(?:got|was|been|being) (?:fired|sacked|let go)", "layoff"),
    (r"lost (?:my|his|her|their|our) job", "layoff"),
    (r"let (?:me|him|her|us|them) go\b(?! to\b)", "layoff"),
    (r"(?:position|role|job) (?:was|got|has been|is being) (?:eliminated|cut)", "layoff"),
    (r"made redundant", "layoff"),
    (r"broke up|broken up|breaking up|split up|dumped me|divorc", "breakup"),
    (r"\b(?:we|and i) (?:just )?split\b(?! (?:the|a|an|it|our|my|up)\b)", "breakup"),
    (
        r"(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?) "
        r"(?:moved out|left me|walked out)",
        "breakup",
    ),
    (r"called off (?:the|our) (?:engagement|wedding)", "breakup"),
    (r"passed away|funeral", "death"),
    (
        r"\b(?:my |our )?" + _KIN + r" (?:just |sadly )?passed\b"
        r"(?! (?:the|a|an|my|his|her|it|me|on|by|through|out|over|up)\b)",
        "death",
    ),
    (
        r"(?<![\w'])(?!(?:" + _DEVICES + r"|just|finally|suddenly)\b)[\w']+"
        r"(?: just| finally| suddenly)? died\b",
        "death",
    ),
    (r"\blost (?:my |our )?" + _KIN + r"\b", "death"),
    (r"(?:had|have) to put (?:my|our|him|her) (?:[\w']+ ){0,2}down\b", "death"),
    (r"put (?:my|our) (?:dog|cat|pet|horse|rabbit)(?: [\w']+)? down\b", "death"),
    (r"put to sleep", "death"),
    (r"got engaged|(?:we're|i'm|we are|i am|and i are) engaged", "engagement"),
    (
        r"proposed to (?:me|her|him|my|[a-z]+ (?:on|at|in|last))"
        r"|\b(?:he|she|they|boyfriend|girlfriend|partner) proposed",
        "engagement",
    ),
    (r"got married|getting married|tied the knot|eloped|just married", "marriage"),
    (r"(?:our|my) wedding\b", "marriage"),
    (r"gave birth|(?:was|were) born|pregnant|newborn", "birth"),
    (
        r"\bhad (?:a|the|our|my|her|his|their) (?:\w+ )?baby\b|\b(?:i|we|wife|husband|partner"
        r"|girlfriend) (?:just )?had (?:a|the|our|my|her) (?:\w+ )?(?:kid|son|daughter|boy|girl"
        r"|child)\b",
        "birth",
    ),
    (r"expecting (?:a baby|twins|triplets|our first|a boy|a girl|a little)", "birth"),
    (r"named (?:the|our) (?:baby|son|daughter)", "birth"),
    (
        r"\b(?:i|we) (?:just |finally |recently )?(?:moved|relocated)(?: back| over)? "
        r"(?:to|in together|into|from)\b",
        "move",
    ),
    (r"^(?:just |finally )?(?:moved|relocated|moving|relocating) (?:to|from)\b", "move"),
    (r"(?:i'm|we're|i am|we are) (?:moving|relocating)(?: back)? (?:to|in|into|out)\b", "move"),
    (r"\bmov(?:e|ing) in (?:on|next|this|tomorrow|together|two|in)\b|moved house", "move"),
    (r"diagnos", "diagnosis"),
    (
        r"(?:doctor|doc|dr|gp|specialist|neurologist|dermatologist|cardiologist|oncologist)s? "
        r"(?:says|said|confirmed|told me) (?:that )?i (?:have|had|'ve got)\b",
        "diagnosis",
    ),
    (r"tested positive for|(?:test|tests|scan|biopsy) came back positive", "diagnosis"),
    (r"new job|got the job|got hired|got a job|landed a job|first day at", "new_job"),
    (r"accepted (?:the|an|a|their) (?:job )?offer", "new_job"),
    (r"started (?:a |my )?new (?:job|role|position)", "new_job"),
    (r"promoted|got (?:a|the) promotion", "promotion"),
    (r"graduated|graduating|defended my (?:thesis|dissertation)", "graduation"),
    (
        r"\bi (?:just |finally |officially )?retired\b|(?:i'm|i am) retiring"
        r"|retiring (?:at|in|next|this|on|from|after)",
        "retirement",
    ),
)

OCCUPATION_ENDINGS = ("er", "or", "ist", "ian", "ant", "ent", "eer", "ect")
OCCUPATIONS = frozenset(
    """nurse teacher engineer developer doctor chef designer student lawyer accountant
    architect pilot dentist pharmacist scientist researcher artist writer musician
    photographer plumber electrician carpenter mechanic firefighter paramedic barista
    cashier consultant analyst manager professor tutor therapist vet veterinarian programmer
    freelancer journalist editor translator farmer baker butcher lead midwife surgeon
    clerk coach librarian receptionist secretary administrator technician mechanic welder
    driver courier postman postwoman cleaner janitor caretaker carer nanny babysitter
    hairdresser barber stylist beautician waiter waitress bartender cook dishwasher
    salesperson accountant auditor banker broker trader economist actuary statistician
    physicist chemist biologist geologist astronomer mathematician historian archaeologist
    psychologist psychiatrist counsellor counselor social worker paralegal solicitor
    barrister judge police officer detective soldier sailor firefighter lifeguard
    paramedic radiographer optometrist physiotherapist physio dietitian nutritionist
    pharmacist surgeon anaesthetist anesthetist obstetrician pediatrician paediatrician
    gp intern resident registrar dancer actor actress singer composer producer director
    animator illustrator copywriter marketer recruiter hr ceo cto cfo founder entrepreneur
    ux ui tester devops sysadmin architect planner surveyor builder roofer plasterer
    painter decorator gardener landscaper florist tailor seamstress jeweller jeweler
    optician vet groomer trainer instructor lecturer principal headteacher teaching
    assistant ta tutor coder programmer investor accountant bookkeeper""".split()
)
NOT_OCCUPATIONS = frozenset(
    """bit little lot fan big huge member part beginner sucker person morning night mess
    wreck owner lover user player center centre corner order other mother father brother
    sister daughter partner supporter follower believer enthusiast addict nerd geek junkie
    buff admirer subscriber reader listener viewer watcher collector hoarder gamer drinker
    eater sleeper talker walker runner swimmer climber hiker cyclist biker birdwatcher
    birder learner winner loser sinner fighter survivor worrier overthinker introvert
    extrovert perfectionist optimist pessimist procrastinator monster disaster
    character""".split()
)
# A word that makes "I'm a ... X" a taste, not a job: "a huge Celtic supporter"
FAN_WORDS = frozenset(
    """huge massive big keen avid lifelong diehard die-hard proud total complete mad
    crazy obsessed hardcore devoted loyal casual occasional amateur wannabe""".split()
)
# The noun at the end of "the staging server port", "the deploy branch": a setting.
SETTING_NOUNS = frozenset(
    """port version branch server host hostname address url endpoint password passcode pin
    number limit timeout ttl size length interval region zone database db cluster channel
    room floor plan tier key token domain ip path folder directory shell editor theme
    language timezone schedule""".split()
)
# Adjectives that say a value is the latest one, not part of what it is ("my new email").
CURRENCY_WORDS = ("new", "current", "latest", "updated")

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
# People and pets in the user's life, tagged when named as "my ..." or "our ...";
# longer phrases first so "my best friend" is not read as "my ... friend".
KIN_WORDS = (
    "best friend",
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "parents",
    "sister",
    "brother",
    "son",
    "daughter",
    "kids",
    "friend",
    "boss",
    "cousin",
    "aunt",
    "uncle",
    "grandma",
    "grandpa",
    "grandmother",
    "grandfather",
    "grandparents",
    "granddad",
    "grandad",
    "nana",
    "granny",
    "coworker",
    "colleague",
    "roommate",
    "flatmate",
    "neighbor",
    "neighbour",
    "landlord",
    "landlady",
    "dog",
    "cat",
    "kid",
    "baby",
    "toddler",
    "niece",
    "nephew",
    "manager",
    "therapist",
    "doctor",
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
    "wait",
    "ok",
    "okay",
    "yeah",
    "honestly",
    "quick question",
)
GREETINGS = ("hi", "hello", "hey", "heya", "hiya", "greetings", "good morning", "good evening")

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
    just really also please thanks sorry guess imagine pretend suppose say like quick long
    rough big huge small bad weird crazy funny sad random news earlier ran made took came
    saw found bought left lost met sent won told gave felt kept thought heard wrote read
    ate now two three four five six seven eight nine ten twenty hundred half""".split()
)
# Capitalised abbreviations that are common nouns, not names.
COMMON_ACRONYMS = frozenset(
    """api ceo cto cfo coo vp phd md ttl adhd ocd ptsd ok lol asap fyi pm am tv dm hr ui ux
    ai id pin gps cpu gpu ram ssd usb pdf faq diy eta irl tbh imo btw omg wtf rsvp ira acl
    er icu mri ct atm iq url dns vpn""".split()
)

# -- small talk: sentences of a chat turn that carry nothing to remember ---------------
# Whole sentences (after a vocative name and punctuation are dropped) that are greetings,
# thanks, wishes, check-ins or reactions to what the other person said. Regular
# expression fragments, matched against the whole folded sentence.
PLEASANTRY_PATTERNS = (
    r"(?:hi|hello|hey|heya|hiya|yo|greetings|good (?:morning|afternoon|evening|night))"
    r"(?: there| again| guys| all| everyone| you| friend)?",
    r"(?:it's |it is |so |really |always )?(?:good|great|nice|lovely|awesome) to "
    r"(?:see|hear from|talk to|chat with|catch up with|hear) (?:you|u)(?: again| too)?",
    r"(?:good|great|nice) (?:seeing|hearing from|talking to|chatting with) (?:you|u)",
    r"how (?:have|'ve) (?:you|u) been|how (?:are|r) (?:you|u)(?: doing)?(?: today| lately)?"
    r"|how's it going|how is it going|how's (?:life|everything|your (?:day|week))"
    r"|what's up(?: with you)?|what's new(?: with you)?|anything new|what now"
    r"|what about you|and you|how about you|you\?",
    r"long time no (?:see|talk|chat)",
    r"(?:thanks|thank you|thx|ty|cheers)(?: so much| a lot| a bunch| again| for (?:that|this|"
    r"asking|sharing|listening|the (?:support|chat|advice|tip|tips|kind words)|everything|"
    r"being there|your (?:support|help|kindness|kind words|advice)))*(?: too)?",
    r"(?:take care|talk (?:to you )?soon|see (?:you|ya)(?: soon| later| around)?|bye(?: for now)?"
    r"|catch you later|have a (?:good|great|nice|lovely|wonderful) (?:day|night|one|weekend|time)"
    r"|good luck(?: with (?:that|it|everything))?|keep (?:it|that) up|keep going|you got this"
    r"|you've got this|you can do it)",
    r"(?:congrats|congratulations)(?: on (?:that|this|it))?",
    r"(?:wow|whoa|woah|omg|aww+|ooh|oh wow|yay|nice one|way to go|good for you|same here"
    r"|me too|so true|that's (?:so |very )?true|exactly|absolutely|sure thing|no doubt|no doubts"
    r"|for sure|definitely|of course|same|indeed|right on|agreed)",
    r"(?:i |we )?(?:(?:\w+ly|so|really|just|100|all|both|also|still) )*(?:love|like|adore"
    r"|loved|liked|enjoyed) (?:it|that|this|them|those|these)(?: so much| a lot| too)?",
    r"(?:i |we )?(?:(?:\w+ly|so|really|just|100|all|both|also) )*(?:agree|get it|understand"
    r"|hear you|feel you|feel the same|know right|know what you mean|couldn't agree more)"
    r"(?: with (?:you|that|this|everything|it))?(?: \w+)?",
    r"(?:that|this|it|that all|it all|which)(?:'s| is| was| sounds| looks| seems)(?: so| really|"
    r" very| super| pretty| such| just| absolutely| totally| quite)*(?: an?)? (?:cool|great|"
    r"awesome|amazing|wonderful|nice|sweet|lovely|impressive|inspiring|fantastic|beautiful|"
    r"incredible|fun|exciting|brave|awesome news|great news|good news|interesting|neat|"
    r"special|powerful|touching|gorgeous|stunning|cute|adorable|tough|hard|rough|sad|"
    r"scary|crazy|wild|huge|big deal|a big deal|a great idea|a good idea|so cool)",
    r"(?:sounds|looks|seems)(?: so| really| like)? (?:great|good|fun|amazing|awesome|lovely|"
    r"a blast|like a blast|like fun|interesting|cool|nice|wonderful|beautiful|peaceful)",
    r"(?:i'm|i am)(?: so| really| very)? (?:happy|glad|proud|thrilled|sorry)(?: for| of| to "
    r"hear)?(?: you| that| about that| it)?",
    r"glad (?:to hear|you)(?: that| it)?(?: \w+){0,3}",
    r"(?:so |really )?(?:love|loved|adore) (?:that|it|this|those|these|your|the)(?: \w+){0,2}",
    r"you(?:'ve| have) got guts|you rock|you're the best|you are the best|well done|bravo"
    r"|hats off|kudos|respect",
    r"(?:by the way |btw |hey |oh )?(?:take a look(?: at (?:this|that|these|it))?|check (?:this|it|"
    r"these) out|look at (?:this|that|these)|here(?:'s| is| are) (?:a|some|the) (?:pic|pics|photo|"
    r"photos|picture|pictures)(?: of (?:it|them|that))?|see (?:this|for yourself))",
)
# A short sentence with one of these and no first-person word is a reaction to the
# other person ("Wow, such a cool painting!", "You'd be a great counselor!").
EVALUATIVE_WORDS = frozenset(
    """cool great awesome amazing wonderful nice sweet lovely impressive inspiring fantastic
    beautiful incredible fun exciting brave proud glad happy sorry wow whoa gorgeous stunning
    cute adorable congrats congratulations love loved guts rock best bravo""".split()
)
FIRST_PERSON_WORDS = frozenset(
    """i me my mine myself we us our ours ourselves i'm im i've i'll i'd we're we've we'll
    we'd""".split()
)
SECOND_PERSON_WORDS = frozenset(
    "you your yours yourself you're you've you'll you'd u ur ya yall y'all".split()
)
# "Note: ..." and "Update: ..." are labels, not speakers named before a colon.
NOT_SPEAKERS = frozenset(
    """update fyi btw news edit note ps question reminder important warning todo tip re
    fwiw tldr summary context background answer q a quick heads status info""".split()
)

# -- what is said to the listener rather than about the speaker ------------------------
# "our ..." that is not the speaker's own ("our army", "our dreams", "our own paths"): a
# note keeps the speaker's words rather than write "Maya's army".
SHARED_WORDS = frozenset(
    """army navy country nation state city town village region community communities society
    world planet generation culture government people folks church faith species own
    minds mind hearts heart lives life stories story dreams dream goals goal journey journeys
    paths path passions experiences voices future past history time chat chats talk talks
    conversation conversations friendship bond differences similarities""".split()
)
# A speaker's attitude to the listener: "I'm so proud of you", "I hope you ...". A sentence
# that says only this (its "I" the attitude's subject, "you" its object) is a reaction.
LISTENER_ATTITUDES = (
    r"(?:hope|wish|bet|trust|admire|appreciate|miss|agree|understand|feel for|owe|thank"
    r"|love|adore|respect|support|believe in|can't wait|cannot wait|look up to"
    r"|(?:am|'m|was) (?:(?:always|here|so|really|very|super|totally|truly|just|all) )*(?:here|there"
    r"|proud|happy|glad|sorry|excited|stoked|thrilled|impressed|inspired|rooting|grateful"
    r"|thankful|lucky|amazed|blown away|jealous|envious|curious|in awe)"
    r"|(?:'ll|will) (?:always |definitely )?(?:be there|be here|keep you|let you|cheer|support"
    r"|help you)"
    r"|(?:'d|would) love to (?:see|hear|meet|try|read|know)"
    r"|think (?:you|your|that's|that is|it's|it is|this is)|know (?:you|what you|how you)"
    r"|(?:totally|completely|absolutely|fully) (?:agree|get it|understand))"
)
# "Hope you feel better", "Can't wait to hear about it": an attitude whose "I" was dropped
SUBJECTLESS_ATTITUDES = (
    r"(?:hope|hoping|wish|wishing|can't wait|cannot wait|glad|so glad|happy for|proud of"
    r"|sorry (?:about|to hear|for)|rooting for|thinking of|praying for|sending|fingers crossed"
    r"|love (?:that|this|it|your|you|those|these|the way)|loving (?:that|this|your|the way)"
    r"|miss(?:ed)? (?:you|ya|u)|appreciate (?:it|that|you|your|the|them|him|her)|admire|respect)\b"
)
# Verbs that open advice or a wish to the listener ("Keep it up!", "Let me know if ...").
# Not the verbs a speaker drops their own "I" before ("Love this song", "Need a nap").
IMPERATIVE_VERBS = frozenset(
    """let keep don't do try go have take enjoy remember make stay hang be check look believe
    chase push cherish stop give get come see listen treat trust follow focus find tell
    bring consider imagine embrace celebrate mind remind relax breathe stick grab spread
    count lemme""".split()
)
# "he", "her", "they": a sentence about someone in the speaker's story, not a remark about
# no one ("Family is everything")
THIRD_PERSON_WORDS = frozenset(
    "he she they them him his her hers their theirs himself herself themselves".split()
)
# Words that make an imperative a standing instruction to an assistant ("always answer in
# Spanish", "never suggest pork"): a preference of the user's, not advice to a listener.
INSTRUCTION_WORDS = frozenset("always never from now on please pls".split())
# Nouns a general remark opens with ("Family is everything", "Kids are resilient"): a
# capitalised first word that is one of these names no one.
GENERIC_SUBJECTS = frozenset(
    """family families friends friendship friendships life love kids children people parents
    music art arts dance painting work success failure failures time happiness health nature
    books writing learning growth change money travel food sport sports exercise fitness
    setbacks mistakes dreams goals passion passions confidence courage kindness support
    community communities events moments memories experiences experience pets animals dogs
    cats school business marketing branding teamwork patience practice talent creativity
    sleep rest stress challenges things everybody everyone nobody somebody someone
    anyone mentors mentorship guidance encouragement acceptance self-care selfcare hobbies
    relationships marriage parenting motherhood fatherhood art's life's love's family's
    teachers students customers clients""".split()
)
# "help me write a cover letter": a request about a task of the user's own, not a lesson
TASK_VERBS = (
    "write",
    "plan",
    "prepare",
    "find",
    "choose",
    "pick",
    "decide",
    "fix",
    "organise",
    "organize",
    "budget",
    "pack",
    "move",
    "sort",
    "figure",
)
