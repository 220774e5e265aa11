/** The bare topology's one local activity: tells the bench's stand-in bridge that a child's command is out. */
export interface BareActivities {
  handOut(childId: string): Promise<void>;
}

export function bareActivities(onHandOut: (childId: string) => void): BareActivities {
  return {
    async handOut(childId: string): Promise<void> {
      onHandOut(childId);
    },
  };
}
