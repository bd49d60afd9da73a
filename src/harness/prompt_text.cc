#include "harness/prompt.h"

namespace pipette {

// Original prose written for pipette (public domain dedication: CC0). Ordinary vocabulary, no
// markup, so every tokenizer sees typical text.
const std::string_view kPromptText =
    "The lighthouse keeper had kept the same routine for eleven years. Every morning he climbed "
    "the one hundred and twelve steps to the lamp room, wiped the salt from the glass, and wrote "
    "the weather in a notebook whose pages had turned the color of weak tea. The village below "
    "called him careful, which he took as a compliment, and a little strange, which he did not "
    "mind.\n\n"
    "In the spring a young engineer arrived with a wooden crate and a letter from the harbor "
    "office. The crate held a small machine that could measure the wind, the pressure of the air, "
    "and the height of the waves, and send the numbers to the mainland every ten minutes. The "
    "keeper read the letter twice, folded it along its old creases, and asked whether the machine "
    "would also climb the stairs.\n\n"
    "They installed it together on a gray afternoon. The engineer talked while she worked: about "
    "sensors that drift when they get warm, about averages that hide the one bad night that "
    "matters, about how a number without the conditions it was taken in is only half a number. "
    "The keeper listened and said little, but that evening he added a new column to his notebook "
    "and wrote down the temperature of the lamp room next to each reading.\n\n"
    "By summer the two of them had an argument they both enjoyed. She trusted the machine because "
    "it never slept; he trusted the notebook because he knew exactly how every line in it had "
    "been made. When a storm came in from the west in August, the machine reported a gust that "
    "the keeper did not believe. They compared the records hour by hour, found the minute when "
    "the sensor had iced over, and marked it, so that nobody reading the data later would mistake "
    "a frozen instrument for a quiet sea.\n\n"
    "When the engineer left in the autumn she gave him a copy of every number the machine had "
    "sent, printed and bound like his own notebooks. He put it on the shelf beside them, in order "
    "of date, and on the first page he wrote where it had been measured, with which instrument, "
    "by whom, and under what sky. Anyone who came after, he said, should be able to repeat the "
    "measurement or at least understand why it came out the way it did.";

}  // namespace pipette
