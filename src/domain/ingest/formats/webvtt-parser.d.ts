// The parts of `webvtt-parser` (no bundled types) that src/domain/ingest/formats/transcript.ts uses.
declare module 'webvtt-parser' {
  export interface ParsedCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
  }
  export interface ParseResult {
    cues: ParsedCue[];
    errors: { message: string; line: number; col: number }[];
  }
  class WebVTTParser {
    parse(input: string, mode?: 'metadata' | 'chapters'): ParseResult;
  }
  const webvtt: { WebVTTParser: typeof WebVTTParser };
  export default webvtt;
}
