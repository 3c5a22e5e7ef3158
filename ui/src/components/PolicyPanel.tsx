import Markdown from "react-markdown";

/** The world's policy (SOP), rendered from Markdown. */
export function PolicyPanel({ policy }: { policy: string }) {
  return (
    <div className="policy markdown" data-testid="policy">
      <Markdown>{policy}</Markdown>
    </div>
  );
}
