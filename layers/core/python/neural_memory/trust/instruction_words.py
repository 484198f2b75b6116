"""Made by ``python -m neural_memory.trust.word_table``: do not edit."""

from neural_memory.trust.instruction_words_0_7 import WORDS as INSTRUCTION_WORDS_0_7
from neural_memory.trust.instruction_words_8_f import WORDS as INSTRUCTION_WORDS_8_F

WORDS: dict[str, list[list[list[str]]]] = {**INSTRUCTION_WORDS_0_7, **INSTRUCTION_WORDS_8_F}
