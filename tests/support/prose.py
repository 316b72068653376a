"""Prose we did not write, for tests of how long text is split: the standard library's own
docstrings, joined into paragraphs of the length a test needs."""

from __future__ import annotations

import argparse
import email
import json
import logging
import textwrap


def long_paragraph(chars: int) -> str:
    """One line of real prose at least `chars` long (the docstrings again and again)."""
    docs = " ".join(m.__doc__ or "" for m in (argparse, json, logging, textwrap, email))
    words = docs.split()
    text = " ".join(words)
    while len(text) < chars:
        text = f"{text} {' '.join(words)}"
    return text
