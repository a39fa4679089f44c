// Ink's <Text>, minus colour when the user asked for none (NO_COLOR, https://no-color.org; the
// rules are src/cli/colour.ts). Bold, dim and inverse stay: they are not colour, and they are what
// still marks the matched words, the selected row and the cursor. Every view draws text through
// this one, so a colour added anywhere later obeys NO_COLOR too.
import { createContext, useContext, type ComponentProps } from 'react';
import { Text as InkText } from 'ink';

/** Whether the TUI may use colour; the app provides it once at its root. */
export const ColourContext = createContext(true);

export function Text({ color, backgroundColor, ...rest }: ComponentProps<typeof InkText>) {
  const colour = useContext(ColourContext);
  return colour ? <InkText color={color} backgroundColor={backgroundColor} {...rest} /> : <InkText {...rest} />;
}
