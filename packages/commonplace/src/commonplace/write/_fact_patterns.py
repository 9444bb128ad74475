"""The note writer's fact rules: the regular expressions that read a changeable fact
(subject, predicate, value) from a statement, tried in order by ``_rules._fact``.

A table of their own, kept apart from the code that runs them; one pattern per line
reads best, so long lines are allowed here.
"""

from __future__ import annotations

import re

from . import _lexicon as lex

# What can end a value: punctuation, the end, or a word that starts a new clause.
END = r"\s*(?:[.,](?!\d)|[!;?]|$|\s+(?:now|since|with|for|because|but|and|as|from now on|these days|instead|rather than|not|that|who|which|btw|lol|haha|on the|at the|in the|too|again|anymore|after|before|until|when|where|in|on|at|to|from|so|today|yesterday|tomorrow|tonight|last|this|next)\b)"
_NAME = r"(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*){0,2}"
_ORG_WORD = r"[\w&'’-]*(?:\.[\w&'’-]+)*"
_ORG = (
    r"(?-i:[A-Z])"
    + _ORG_WORD
    + r"(?:\s+(?:of\s+|de\s+|&\s+)?(?-i:[A-Z0-9])"
    + _ORG_WORD
    + r"){0,3}"
)
# a place may be typed in lower case ("toronto"), but only its first word
_PLACE = (
    r"(?!(?:" + "|".join(lex.MONTHS_AND_DAYS) + r")\b)[A-Z][\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*){0,2}"
)
_TOKEN = r"[\w@:/#'’+-]+(?:\.[\w@:/#'’+-]+)*"
_VALUE = _TOKEN + r"(?:\s+" + _TOKEN + r"){0,5}?"

# (pattern, subject, predicate, event); an empty predicate is read from the
# match's "p" group. The value is always the "v" group; the event (if any) is
# what the fact implies ("I just started at Canva" is a new job).
FACT_PATTERNS: tuple[tuple[re.Pattern[str], str, str, str | None], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), subject, predicate, event)
    for pattern, subject, predicate, event in (
        (
            r"\bmy (?:first |full )?name(?:'s| is) (?P<v>" + _NAME + r"|[\w'’-]+)",
            "user",
            "name",
            None,
        ),
        (r"\b(?:call me|i go by|you can call me) (?P<v>[\w'’-]{1,30})", "user", "name", None),
        (
            r"\b(?:i|we)(?:'m| am|'re| are) (?:now )?(?:living|based) in (?P<v>"
            + _PLACE
            + r")"
            + END,
            "user",
            "city",
            None,
        ),
        (
            r"\b(?:i|we) (?:now |still |currently )?live in (?:(?:a|an|the|our|my) [\w' -]{1,30}? in )?(?P<v>"
            + _PLACE
            + r")"
            + END,
            "user",
            "city",
            None,
        ),
        (
            r"\b(?:i|we)(?:'m| am|'re| are) now in (?P<v>" + _PLACE + r")" + END,
            "user",
            "city",
            None,
        ),
        (r"\b(?:i|we)(?:'m| am|'re| are) in (?P<v>" + _PLACE + r") now\b", "user", "city", None),
        (
            r"(?:\b(?:i|we)\s+|^)(?:just |finally |recently )?(?:moved|relocated)(?: back| over| in together)?(?: from [\w'’ -]+?)? (?:to|in) (?P<v>(?!the\b|a\b|my\b|our\b)"
            + _PLACE
            + r")"
            + END,
            "user",
            "city",
            "move",
        ),
        (
            r"\bi (?:now |still |currently )?work (?:at|for) (?P<v>"
            + _ORG
            + r"|"
            + _TOKEN
            + r")"
            + END
            + r"|\bi work (?:at|for) (?P<w>[\w&'’ .-]{1,40}?)\s*(?:[.,!;]|$| as| now| since)",
            "user",
            "employer",
            None,
        ),
        (
            r"\bi (?:just )?joined (?:a|an) (?:[\w-]+ ){0,4}?(?:company|startup|firm|agency|studio|lab|team|bank|nonprofit|charity) (?:called|named) (?P<v>"
            + _ORG
            + r")",
            "user",
            "employer",
            "new_job",
        ),
        (
            r"(?:\bi(?:'ve| have)? |^)(?:just |finally |officially )?(?:joined|started at|start at|(?:started|starting|start) (?:a |my )?(?:new )?(?:job|role|position) (?:at|with)|started working at|got a job at|got the job at|landed a job at|accepted (?:the|an|a|their) (?:job )?offer (?:from|at))(?:\s+work)? (?P<v>"
            + _ORG
            + r")",
            "user",
            "employer",
            "new_job",
        ),
        (
            r"\bi(?:'m| am) (?:starting|beginning) (?:a new job |work )?at (?P<v>" + _ORG + r")",
            "user",
            "employer",
            "new_job",
        ),
        (
            r"\bi(?:'m| am) now (?:at|with|working at|working for) (?P<v>" + _ORG + r")",
            "user",
            "employer",
            "new_job",
        ),
        (
            r"\bpromoted to (?:be |the role of |become )?(?:an? |the )?(?P<v>[a-z]+(?: [a-z]+){0,3}?)"
            + END,
            "user",
            "job",
            "promotion",
        ),
        (
            r"\bi work as (?:an? )?(?P<v>[\w -]{2,40}?)\s*(?:[.,!;]|$| at| for| in)",
            "user",
            "job",
            None,
        ),
        (
            r"\bmy (?:job|profession|occupation) is (?:an? )?(?P<v>[\w -]{2,40}?)\s*(?:[.,!;]|$)",
            "user",
            "job",
            None,
        ),
        (
            r"\b(?:i|we)(?:'m| am) (?:now )?(?:on|in) the (?P<v>[\w -]{1,30}?) team\b",
            "user",
            "team",
            None,
        ),
        (
            r"\bi(?:'m| am|m) (?P<v>\d{1,3})(?:\s*(?:years old|year old|yo|y/o))?(?="
            + END
            + r"|\s+(?:years|today|this|next))",
            "user",
            "age",
            None,
        ),
        (r"\bi (?:just |recently )?turned (?P<v>\d{1,3})\b", "user", "age", None),
        (
            r"\bmy (?:wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse)(?:'s name)? is (?P<v>"
            + _NAME
            + r")",
            "user",
            "partner",
            None,
        ),
        (
            r"\bi(?:'m| am|'ve been| have been) (?:dating|seeing|with) (?:someone|somebody|a (?:guy|girl|man|woman))(?: new)?\W+(?:her|his|their) name is (?P<v>"
            + _NAME
            + r")",
            "user",
            "partner",
            None,
        ),
        (
            r"\bi(?:'m| am) (?:dating|seeing|engaged to|married to) (?P<v>" + _NAME + r")",
            "user",
            "partner",
            None,
        ),
        (r"\b(?:my|our) (?P<p>[a-z]+)'s name is (?P<v>" + _NAME + r")", "user", "", None),
        (
            r"\b(?:my|our) (?P<p>[a-z][a-z0-9 ]{1,30}?) (?:has )?(?:changed|is different now)(?: to|,? (?:it's|it is|now it's)| - it's)? (?P<v>"
            + _VALUE
            + r")"
            + END,
            "user",
            "",
            None,
        ),
        (
            r"\b(?:my|our) (?P<p>[a-z][a-z0-9 ]{1,30}?) (?:is|are|was changed to|changed to) (?:now )?(?!\w+ing\b)(?P<v>"
            + _VALUE
            + r")"
            + END,
            "user",
            "",
            None,
        ),
        (
            r"\b(?:the|our|my) (?P<p>[a-z][a-z0-9 ]{1,30}?) (?:is now|moved to|changed to|was moved to|was changed to|(?:now )?(?:runs on|points to|listens on|lives at|is hosted (?:at|on))|is moving to) (?P<v>"
            + _VALUE
            + r")"
            + END,
            "user",
            "",
            None,
        ),
        (
            r"\b(?:the|our|my) (?P<p>[a-z][a-z0-9 ]{1,30}?) (?:has |have |was |were |just |recently )*(?:relocated|migrated|switched(?: its [a-z]+)?|rewritten|rebuilt|ported|grew|dropped|rose|fell|shrank|went (?:up|down)|upgraded|downgraded|expanded) (?:over )?(?:to|in|into|onto) (?P<v>"
            + _VALUE
            + r")"
            + END,
            "user",
            "",
            None,
        ),
        (
            r"(?P<v>"
            + _NAME
            + r") is (?:now )?(?:my|our) (?:new )?(?P<p>(?:"
            + "|".join(
                lex.KIN_WORDS
                + lex.PARTNER_WORDS
                + (
                    "manager",
                    "boss",
                    "landlord",
                    "teacher",
                    "coach",
                    "doctor",
                    "therapist",
                    "mentor",
                    "roommate",
                    "neighbour",
                    "neighbor",
                )
            )
            + r"))\b",
            "user",
            "",
            None,
        ),
        (
            r"\b(?:i |we )?(?:changed|switched|set|updated|bumped|upgraded|moved|migrated|raised|lowered|increased|decreased|reduced) (?:the|my|our) (?P<p>[a-z][a-z0-9 ]{1,30}?) (?:to|over to) (?P<v>"
            + _VALUE
            + r")"
            + END,
            "user",
            "",
            None,
        ),
    )
)
# "the X is Y" is a fact only for a setting, a number or an update ("the weather is
# nice" is not), which the writer's _predicate checks.
THE_X_IS = re.compile(
    r"\b(?:the|our) (?P<p>[a-z][a-z0-9 ]{1,30}?) (?:is|are)(?: now)?(?: (?P<prep>on|at))? (?P<v>"
    + _VALUE
    + r")"
    + END,
    re.IGNORECASE,
)
