"""The words people put before a question in chat, which say nothing about what is asked.

"I'm new here: what are the main parts?", "quick question - how does retry work?",
"hey team, sorry if this is obvious, where is X defined?": the question is what follows.
`without_preamble` removes such openings (any number, each ending at `:`, `,`, `-`, `.`,
`!` or `?`) so that a question is taken to be the same question with or without them.
"""

from __future__ import annotations

import re

_OPENING = (
    r"(?:hey|hi|hello|yo|ok(?:ay)?|so|um+|hmm+)(?:\s+(?:all|everyone|folks|team|there|guys|y'all))?"
    r"|(?:a\s+)?(?:quick|small|simple|dumb|stupid|silly|noob|newbie|basic|general)\s+question"
    r"|question|q"
    r"|(?:i'?m|i\s+am)\s+(?:new|fairly\s+new|pretty\s+new|brand\s+new)(?:\s+(?:here|to\s+(?:this|the)"
    r"\s+(?:code\s*base|codebase|code|project|repo(?:sitory)?|team)))?"
    r"|(?:new|newbie|noob)\s+here|first\s+(?:day|week)\s+(?:here|on\s+the\s+team)"
    r"|sorry\s+if\s+this\s+is\s+(?:obvious|a\s+dumb\s+question|basic)|sorry(?:\s+to\s+bother)?"
    r"|(?:please\s+)?help(?:\s+me)?\s+understand|(?:just\s+)?(?:curious|wondering)"
    r"|i\s+(?:have|got)\s+a\s+(?:quick\s+)?question"
)
_PREAMBLE = re.compile(rf"^\s*(?:(?:{_OPENING})\s*(?:[:,.!?;]+|\s[-–—]+)\s*)+", re.IGNORECASE)


def without_preamble(text: str) -> str:
    """`text` with its chat openings removed (unchanged when nothing would be left)."""
    rest = _PREAMBLE.sub("", text, count=1)
    return rest if rest.strip() else text
