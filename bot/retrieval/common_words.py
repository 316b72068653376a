"""Everyday words of questions that no code need contain: absent, they say nothing.

"How does the router pick a handler?", "how do we figure out the charset?", "what
decides which backend runs?", "where is X defined, the one that ...?": `pick`, `figure`,
`decide`, `defined` and `one` are how people talk, not what code is named. Such a word
missing from every indexed chunk is no sign the code does not cover the question, so the
coverage verdict (`bot.retrieval.relevance`) leaves it out when it is absent (present,
it still counts). Named things (identifiers, flags, proper nouns) and domain words
(`blueprint`, `cookie`, `retry`) are never in this list.
"""

from __future__ import annotations

from bot.text.tokens import stem

COMMON_WORDS = frozenset(
    """
    pick picks picked picking choose chooses chose chosen choosing decide decides decided
    deciding figure figures figured figuring determine determines determined work works
    worked working happen happens happened happening occur occurs occurred go goes going
    went gone come comes coming came end ends ended ending wind winds winding turn turns
    turned turning deal deals dealt dealing take takes took taken taking put puts putting
    bring brings brought keep keeps kept keeping let lets make makes made making know knows
    knew known need needs needed want wants wanted try tries tried trying see sees saw seen
    look looks looked looking think thinks thought actually exactly basically really
    typically usually normally generally eventually finally first later next last before
    after whole entire overall main actual real certain particular specific various several
    thing things stuff part parts piece pieces bit bits kind kinds sort sorts lot lots
    place places spot point points step steps stage stages moment time times case cases
    situation situations scenario scenarios example examples idea ideas reason reasons
    purpose purposes detail details logic mechanism mechanisms behaviour behavior
    responsible responsibility job jobs role roles somewhere somehow anything something
    everything nothing anyone someone everyone nobody please thanks thank hi hello hey
    quick question questions wondering curious understand understanding confused
    confusing new newbie sure exact right wrong good better best bad worse worst big small
    large little many much few enough simple simply easy easily hard just also still even
    ever never always often sometimes again instead rather quite pretty whether either
    neither both each every another other others own same different similar such able
    possible likely probably maybe perhaps kind_of end_up lead leads leading led
    eventually overall together apart along around across inside outside within without
    upon onto toward towards behind beyond throughout
    define defines defined defining definition definitions declare declares declared
    declaring declaration declarations implement implements implemented implementing
    implementation implementations locate located location live lives lived reside resides
    one ones which whichever
    """.split()
)
COMMON_STEMS = frozenset(stem(w) for w in COMMON_WORDS)


def is_common(word: str) -> bool:
    """Whether `word` (as the question wrote it) is everyday question vocabulary."""
    lower = word.lower()
    return lower in COMMON_WORDS or stem(lower) in COMMON_STEMS
