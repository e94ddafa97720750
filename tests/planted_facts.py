"""A long document with facts planted at known places, for retrieval tests (deterministic: a fixed seed)."""

from __future__ import annotations

import random

SUBJECTS = [
    ("red", "lighthouse"), ("green", "bakery"), ("blue", "observatory"), ("silver", "library"), ("golden", "stadium"),
    ("purple", "greenhouse"), ("orange", "warehouse"), ("black", "museum"), ("white", "hospital"), ("yellow", "theatre"),
    ("copper", "monastery"), ("crimson", "aquarium"), ("ivory", "brewery"), ("amber", "castle"), ("violet", "harbour"),
    ("scarlet", "university"), ("emerald", "windmill"), ("bronze", "cathedral"), ("pink", "railway station"), ("grey", "vineyard"),
]
NOUNS = ["river", "market", "garden", "road", "village", "forest", "bridge", "school", "farm", "mountain", "valley", "square", "tower", "field"]
VERBS = ["was repaired", "grew quiet", "was painted", "filled with visitors", "was described in the chronicle", "changed owners", "flooded", "was mapped"]
TIMES = ["in the spring", "after the war", "during the long winter", "every autumn", "in the old days", "last century", "at dawn", "before the fair"]


def fact(i: int) -> str:
    color, place = SUBJECTS[i]
    return f"The secret code of the {color} {place} is {1000 + 397 * i % 9000}."


def question(i: int) -> str:
    color, place = SUBJECTS[i]
    return f"What is the secret code of the {color} {place}?"


def filler_paragraph(rng: random.Random) -> str:
    sentences = [f"The {rng.choice(NOUNS)} near the {rng.choice(NOUNS)} {rng.choice(VERBS)} {rng.choice(TIMES)}." for _ in range(rng.randint(3, 6))]
    return " ".join(sentences)


def planted_document(paragraphs: int, facts: int = 20, seed: int = 7) -> str:
    """`paragraphs` paragraphs of filler, with fact i planted in its own paragraph, spread evenly through the text."""
    rng = random.Random(seed)
    body = [filler_paragraph(rng) for _ in range(paragraphs)]
    for i in range(facts):
        at = (i * paragraphs) // facts + paragraphs // (2 * facts)
        body[at] = f"{filler_paragraph(rng)} {fact(i)} {filler_paragraph(rng)}"
    return "\n\n".join(body)
