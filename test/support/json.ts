/** A JSON object as tests read it from an answer: any field, any value (the test's expectations say which). */
export type Json = Record<string, any>;
