import { lazy, Suspense, useCallback, useRef, useState } from "react";
import { api } from "./api";
import { Home } from "./screens/Home";
import { HubSignIn } from "./screens/HubSignIn";

// The workspace (forms, tables, Markdown) loads on first use, so the start
// screen is interactive sooner.
const Workspace = lazy(() => import("./screens/Workspace").then((m) => ({ default: m.Workspace })));
const ReviewQueue = lazy(() => import("./screens/ReviewQueue").then((m) => ({ default: m.ReviewQueue })));
const Replay = lazy(() => import("./screens/Replay").then((m) => ({ default: m.Replay })));
const Grading = lazy(() => import("./screens/Grading").then((m) => ({ default: m.Grading })));
const GradeRun = lazy(() => import("./screens/GradeRun").then((m) => ({ default: m.GradeRun })));
const Dashboard = lazy(() => import("./screens/Dashboard").then((m) => ({ default: m.Dashboard })));
const Progress = lazy(() => import("./screens/Progress").then((m) => ({ default: m.Progress })));
const RubricWorkspace = lazy(() => import("./screens/RubricWorkspace").then((m) => ({ default: m.RubricWorkspace })));

// Ask for the start screen's data as soon as the script runs, while React
// renders for the first time.
const firstHome = api.home();

type Screen =
  | { name: "home" }
  | { name: "workspace"; episodeId: string }
  | { name: "queue" }
  | { name: "replay"; episodeId: string }
  | { name: "rubric"; worldId: string; taskId: string }
  | { name: "grading" }
  | { name: "dashboard"; exporting?: boolean }
  | { name: "progress" }
  | { name: "grade-run"; episodeId: string }
  | { name: "hub-sign-in" };

export function App() {
  const [screen, setScreen] = useState<Screen>({ name: "home" });
  const marked = useRef(false);
  const onReady = useCallback(() => {
    if (marked.current) return;
    marked.current = true;
    requestAnimationFrame(() => void api.markInteractive("app").catch(() => undefined));
  }, []);

  if (screen.name === "workspace") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the task…</div>}>
        <Workspace
          key={screen.episodeId}
          episodeId={screen.episodeId}
          onHome={() => setScreen({ name: "home" })}
          onOpen={(episodeId) => setScreen({ name: "workspace", episodeId })}
        />
      </Suspense>
    );
  }
  if (screen.name === "queue") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the review queue…</div>}>
        <ReviewQueue
          onHome={() => setScreen({ name: "home" })}
          onReplay={(episodeId) => setScreen({ name: "replay", episodeId })}
        />
      </Suspense>
    );
  }
  if (screen.name === "grading") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the agent runs…</div>}>
        <Grading onHome={() => setScreen({ name: "home" })} onGrade={(episodeId) => setScreen({ name: "grade-run", episodeId })} />
      </Suspense>
    );
  }
  if (screen.name === "dashboard") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the scores…</div>}>
        <Dashboard onHome={() => setScreen({ name: "home" })} exporting={screen.exporting} />
      </Suspense>
    );
  }
  if (screen.name === "progress") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening everyone's progress…</div>}>
        <Progress onHome={() => setScreen({ name: "home" })} />
      </Suspense>
    );
  }
  if (screen.name === "grade-run") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the run…</div>}>
        <GradeRun key={screen.episodeId} episodeId={screen.episodeId} onBack={() => setScreen({ name: "grading" })} />
      </Suspense>
    );
  }
  if (screen.name === "rubric") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the rubric…</div>}>
        <RubricWorkspace
          key={`${screen.worldId}/${screen.taskId}`}
          worldId={screen.worldId}
          taskId={screen.taskId}
          onHome={() => setScreen({ name: "home" })}
        />
      </Suspense>
    );
  }
  if (screen.name === "hub-sign-in") {
    return <HubSignIn onDone={() => setScreen({ name: "home" })} onCancel={() => setScreen({ name: "home" })} />;
  }
  if (screen.name === "replay") {
    return (
      <Suspense fallback={<div className="center-screen muted">Opening the recording…</div>}>
        <Replay key={screen.episodeId} episodeId={screen.episodeId} onBack={() => setScreen({ name: "queue" })} />
      </Suspense>
    );
  }
  return (
    <Home
      onOpen={(episodeId) => setScreen({ name: "workspace", episodeId })}
      onReview={() => setScreen({ name: "queue" })}
      onGrading={() => setScreen({ name: "grading" })}
      onDashboard={() => setScreen({ name: "dashboard" })}
      onExport={() => setScreen({ name: "dashboard", exporting: true })}
      onProgress={() => setScreen({ name: "progress" })}
      onRubric={(worldId, taskId) => setScreen({ name: "rubric", worldId, taskId })}
      onHubSignIn={() => setScreen({ name: "hub-sign-in" })}
      onReady={onReady}
      initial={marked.current ? undefined : firstHome}
    />
  );
}
