/** Upper bound of events a task page loads for one task (the timeline bins them). */
export const TIMELINE_EVENT_CAP = 20_000;
